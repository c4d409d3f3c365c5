import StorekeeperCore

/// Which processes `storekeeper up` starts, in which order, with which
/// environment. Pure, so the plan is testable without starting anything.
struct StackPlan: Equatable {
    struct Member: Equatable {
        /// Shown as the prefix of its output and in the supervisor's lines, e.g. `verifier-2`.
        let name: String
        /// The executable's product name.
        let executable: String
        /// Variables set on top of the supervisor's own environment.
        let environment: [String: String]
    }

    /// Start order; stopped in reverse.
    let members: [Member]
    /// Where the gateway answers: the `ready` line and /readyz.
    let gatewayURL: String

    /// With the simulator, the stack must work end to end on the defaults: the
    /// verifiers call the simulator, the simulator posts its notifications to
    /// the gateway, and when no shared secret is configured all of them share
    /// `demoSecret` (the simulator checks `password` as Apple does, and the
    /// gateway checks it on notifications); with no bundle configured, all of
    /// them take the simulator's.
    /// `simulatorRootFile` holds the simulator's test root (PEM): with the
    /// simulator, and no roots configured, the verifiers trust it for StoreKit 2
    /// and version 2 notifications, which the simulator signs.
    init(
        configuration: StorekeeperConfiguration, verifiers: Int, withSimulator: Bool, demoSecret: String,
        simulatorRootFile: String
    ) {
        gatewayURL = GatewayTarget.localURL(of: configuration.gateway.httpAddress)
        var shared: [String: String] = [:]
        var verifierEnvironment: [String: String] = [:]
        var members: [Member] = []
        if withSimulator {
            if configuration.apple.sharedSecret == nil {
                shared[ConfigurationVariable.appleSharedSecret.rawValue] = demoSecret
            }
            // Signed data needs a bundle to tie it to: the one the simulator sells.
            if configuration.apple.bundleIDs.isEmpty {
                shared[ConfigurationVariable.bundleIDs.rawValue] = SimulatorSettings.defaultBundleID
            }
            var simulatorEnvironment = shared
            if configuration.simulator.notificationURL == nil {
                simulatorEnvironment[ConfigurationVariable.simulatorNotificationURL.rawValue] =
                    gatewayURL + "/v1/notifications/apple"
            }
            members.append(Member(name: "sim", executable: "storekeeper-sim", environment: simulatorEnvironment))
            let base = "http://\(configuration.simulator.address)"
            verifierEnvironment[ConfigurationVariable.appleProductionURL.rawValue] = base + "/production/verifyReceipt"
            verifierEnvironment[ConfigurationVariable.appleSandboxURL.rawValue] = base + "/sandbox/verifyReceipt"
            if configuration.apple.jwsExtraRootFiles.isEmpty {
                verifierEnvironment[ConfigurationVariable.jwsExtraRoots.rawValue] = simulatorRootFile
            }
        }
        members.append(Member(name: "ledger", executable: "storekeeper-ledger", environment: [:]))
        for index in 1...max(verifiers, 1) {
            members.append(
                Member(
                    name: "verifier-\(index)", executable: "storekeeper-verifier",
                    environment: shared.merging(verifierEnvironment) { $1 }))
        }
        members.append(Member(name: "gateway", executable: "storekeeper-gateway", environment: shared))
        self.members = members
    }
}
