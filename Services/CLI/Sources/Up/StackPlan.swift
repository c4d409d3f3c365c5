import StorekeeperCore

/// Which processes `storekeeper up` starts, in which order, with which
/// environment. Pure, so the plan is testable without starting anything.
struct StackPlan: Equatable {
    struct Member: Equatable {
        /// Shown in the supervisor's own lines, e.g. `verifier-2`.
        let name: String
        /// The executable's product name.
        let executable: String
        /// Variables set on top of the supervisor's own environment.
        let environment: [String: String]
    }

    /// Start order; stopped in reverse.
    let members: [Member]
    /// What /readyz is polled on.
    let gatewayAddress: SocketAddress

    init(configuration: StorekeeperConfiguration, verifiers: Int, withSimulator: Bool) {
        var members: [Member] = []
        var verifierEnvironment: [String: String] = [:]
        if withSimulator {
            members.append(Member(name: "sim", executable: "storekeeper-sim", environment: [:]))
            let base = "http://\(configuration.simulator.address)"
            verifierEnvironment[ConfigurationVariable.appleProductionURL.rawValue] = base + "/production/verifyReceipt"
            verifierEnvironment[ConfigurationVariable.appleSandboxURL.rawValue] = base + "/sandbox/verifyReceipt"
        }
        members.append(Member(name: "ledger", executable: "storekeeper-ledger", environment: [:]))
        for index in 1...max(verifiers, 1) {
            members.append(
                Member(name: "verifier-\(index)", executable: "storekeeper-verifier", environment: verifierEnvironment))
        }
        members.append(Member(name: "gateway", executable: "storekeeper-gateway", environment: [:]))
        self.members = members
        self.gatewayAddress = configuration.gateway.httpAddress
    }
}
