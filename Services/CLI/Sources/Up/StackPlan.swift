import AppleJWS
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
    /// Where the first gateway answers: the `ready` line and /readyz.
    var gatewayURL: String { gatewayURLs[0] }
    /// Every gateway's URL, first one first.
    let gatewayURLs: [String]

    /// How many of each, and the PostgreSQL the ledgers share (required for more than one ledger).
    struct Scale: Equatable {
        var verifiers = 2
        var ledgers = 1
        var gateways = 1
        var databaseURL: String?
    }

    /// With the simulator, the stack must work end to end on the defaults: the
    /// verifiers call the simulator, the simulator posts its notifications to
    /// the gateway, and when no shared secret is configured all of them share
    /// `demoSecret` (the simulator checks `password` as Apple does, and the
    /// gateway checks it on notifications); with no bundle configured, all of
    /// them take the simulator's.
    /// `simulatorRootFile` holds the simulator's test root (PEM): with the
    /// simulator, and no roots configured, the verifiers trust it for StoreKit 2
    /// and version 2 notifications, which the simulator signs.
    /// `simulatorKeyFile` holds the simulator's App Store Connect key (`.p8`):
    /// with the simulator, the verifiers' App Store Server API is the
    /// simulator's, with that key (the simulator knows no other), and the
    /// simulator, verifiers and gateways share the app's Apple ID (the
    /// configured one, else the simulator's).
    ///
    /// Scaled (several ledgers or gateways), member N of a kind takes the
    /// configured endpoint or address with its port moved by 100 x (N - 1) (HTTP:
    /// by N - 1); every gateway knows every ledger and every verifier every
    /// gateway. The ledgers share the events and replay endpoints (only the
    /// elected one binds them); only the first refreshes lapsed subscriptions
    /// and catches notifications up (both on its refresh pool).
    init(
        configuration: StorekeeperConfiguration, scale: Scale, withSimulator: Bool, demoSecret: String,
        simulatorRootFile: String, simulatorKeyFile: String
    ) {
        let endpoints = configuration.endpoints
        let gatewayCount = max(scale.gateways, 1)
        let ledgerCount = max(scale.ledgers, 1)
        let ledgerEndpoints = (0..<ledgerCount).map { Self.moved(endpoints.ledger, by: 100 * $0) }
        let verifierEndpoints = (0..<gatewayCount).map { Self.moved(endpoints.verifier, by: 100 * $0) }
        let httpAddresses = (0..<gatewayCount).map {
            SocketAddress(host: configuration.gateway.httpAddress.host, port: configuration.gateway.httpAddress.port + $0)
        }
        gatewayURLs = httpAddresses.map(GatewayTarget.localURL(of:))
        let gatewayURL = gatewayURLs[0]
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
            // The simulator's answers and the verifiers' checks must agree on the app's Apple ID.
            if configuration.apple.appAppleID == nil {
                shared[ConfigurationVariable.appleAppID.rawValue] = String(SimulatorServerAPIKey.appAppleID)
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
            Self.pointServerAPI(at: base, keyFile: simulatorKeyFile, &verifierEnvironment)
        }
        typealias V = ConfigurationVariable
        let scaled = ledgerCount > 1 || gatewayCount > 1
        for (index, endpoint) in ledgerEndpoints.enumerated() {
            var environment: [String: String] = [:]
            if let url = scale.databaseURL { environment[V.databaseURL.rawValue] = url }
            if scaled { environment[V.ledgerEndpoint.rawValue] = endpoint }
            // The first ledger alone refreshes and catches notifications up: those bind the refresh pool.
            if index > 0 {
                environment[V.refreshPerMinute.rawValue] = "0"
                environment[V.notificationCatchUpSeconds.rawValue] = "0"
            }
            members.append(
                Member(
                    name: ledgerCount == 1 ? "ledger" : "ledger-\(index + 1)", executable: "storekeeper-ledger",
                    environment: environment))
        }
        if scaled {
            verifierEnvironment[V.verifierEndpoint.rawValue] = verifierEndpoints.joined(separator: ",")
            // The gateways' list: a verifier hands a gateway's receipts only to the ledgers it names.
            verifierEnvironment[V.ledgerEndpoint.rawValue] = ledgerEndpoints.joined(separator: ",")
        }
        for index in 1...max(scale.verifiers, 1) {
            members.append(
                Member(
                    name: "verifier-\(index)", executable: "storekeeper-verifier",
                    environment: shared.merging(verifierEnvironment) { $1 }))
        }
        for index in 0..<gatewayCount {
            var environment = shared
            if scaled {
                environment[V.httpAddress.rawValue] = httpAddresses[index].description
                environment[V.verifierEndpoint.rawValue] = verifierEndpoints[index]
                environment[V.ledgerEndpoint.rawValue] = ledgerEndpoints.joined(separator: ",")
            }
            members.append(
                Member(
                    name: gatewayCount == 1 ? "gateway" : "gateway-\(index + 1)", executable: "storekeeper-gateway",
                    environment: environment))
        }
        self.members = members
    }

    /// The verifiers' App Store Server API: the simulator's, at `base`, with its test key.
    private static func pointServerAPI(at base: String, keyFile: String, _ verifiers: inout [String: String]) {
        typealias V = ConfigurationVariable
        verifiers[V.appleAPIProductionURL.rawValue] = base + "/production"
        verifiers[V.appleAPISandboxURL.rawValue] = base + "/sandbox"
        verifiers[V.appleIssuerID.rawValue] = SimulatorServerAPIKey.issuerID
        verifiers[V.appleKeyID.rawValue] = SimulatorServerAPIKey.keyID
        verifiers[V.applePrivateKeyFile.rawValue] = keyFile
    }

    /// `address` (an endpoint `tcp://host:port`) with its port moved by `offset`;
    /// any other endpoint (ipc://) gets `-N` appended.
    static func moved(_ address: String, by offset: Int) -> String {
        guard offset != 0 else { return address }
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]) else {
            return address + "-\(offset)"
        }
        return address[...colon] + "\(port + offset)"
    }
}
