import Foundation
import Testing
import Yams

@testable import StorekeeperCore

/// compose/ against the contract: no Docker engine runs here, so the file
/// itself is checked: services, executables, variables, how the ZeroMQ
/// endpoints pair up (who binds, who connects to whom), ports and volumes.
///
/// A role runs as one service (`verifier`, scaled with replicas) or as
/// numbered services (`ledger-1`, `ledger-2`) when others must reach each
/// instance by its own name, or each publishes its own port (`gateway-1`).
/// Verifiers resolve a name to every address it has (`PoolDiscovery`), so one
/// alias carried by every gateway reaches them all.
@Suite struct ComposeFileTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("compose")

    /// The executable each Storekeeper role runs.
    static let executables = [
        "ledger": "storekeeper-ledger", "verifier": "storekeeper-verifier", "gateway": "storekeeper-gateway",
        "sim": "storekeeper-sim",
    ]

    /// Which role binds each endpoint; every other service connects to it by name.
    static let binders: [ConfigurationVariable: String] = [
        .eventsEndpoint: "ledger", .ledgerEndpoint: "ledger", .replayEndpoint: "ledger", .refreshEndpoint: "ledger",
        .verifierEndpoint: "gateway",
    ]

    /// Endpoints a connecting service takes as a comma list: it connects to each
    /// binder by its own name (a gateway's DEALER to a shared alias would reach one
    /// ledger only). The others take one endpoint: a name that reaches every binder
    /// and nothing else (only the elected ledger binds events and replay; a verifier
    /// connects to every address of its name).
    static let lists: Set<ConfigurationVariable> = [.ledgerEndpoint]

    /// Set on a ledger that never refreshes (so binds no refresh pool).
    static let refreshOff = (ConfigurationVariable.refreshPerMinute.rawValue, "0")

    let document: [String: Any]
    let services: [String: [String: Any]]

    init() throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        document = try #require(try Yams.load(yaml: text) as? [String: Any])
        services = try #require(document["services"] as? [String: [String: Any]])
    }

    func environment(_ service: String) -> [String: String] {
        (services[service]?["environment"] as? [String: Any] ?? [:]).mapValues { "\($0)" }
    }

    /// `ledger-2` plays `ledger`; `verifier` plays `verifier`.
    static func role(of service: String) -> String {
        guard let dash = service.lastIndex(of: "-"), Int(service[service.index(after: dash)...]) != nil else {
            return service
        }
        return String(service[..<dash])
    }

    /// The services playing `role`, in name order.
    func members(of role: String) -> [String] {
        services.keys.filter { Self.role(of: $0) == role }.sorted()
    }

    /// The services of `role` that bind `variable`'s endpoint.
    func servicesBinding(_ variable: ConfigurationVariable, role: String) -> [String] {
        members(of: role).filter { variable != .refreshEndpoint || environment($0)[Self.refreshOff.0] != Self.refreshOff.1 }
    }

    /// The other names `service` answers to on the compose network.
    func aliases(of service: String) -> [String] {
        let networks = services[service]?["networks"] as? [String: Any] ?? [:]
        return networks.values.flatMap { ($0 as? [String: Any])?["aliases"] as? [String] ?? [] }
    }

    /// The services a host name reaches on the compose network: the one so
    /// named, or every one carrying it as an alias.
    func reached(by name: String) -> Set<String> {
        Set(services.keys.filter { $0 == name || aliases(of: $0).contains(name) })
    }

    /// The hosts of a comma list of `tcp://HOST:PORT` endpoints.
    static func hosts(_ endpoints: String?) -> [String] {
        (endpoints ?? "").split(separator: ",").compactMap { SocketAddress(String($0.dropFirst("tcp://".count)))?.host }
    }

    /// The password of `postgres://USER:PASSWORD@HOST...`: the one secret part of the URL.
    static func password(inDatabaseURL url: String) -> String {
        let authority = url.split(separator: "://", maxSplits: 1).last ?? ""
        let userInfo = authority.split(separator: "@").dropLast().joined(separator: "@")
        return userInfo.split(separator: ":", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
    }

    @Test func eachServiceRunsItsExecutableWithKnownVariablesOnly() {
        let storekeeper = services.keys.filter { $0 != "postgres" }
        #expect(Set(storekeeper.map(Self.role(of:))) == Set(Self.executables.keys))
        let known = Set(ConfigurationVariable.allCases.map(\.rawValue))
        for service in storekeeper {
            let executable = Self.executables[Self.role(of: service)]
            #expect((services[service]?["command"] as? [String])?.first == executable, "\(service)")
            #expect(Set(environment(service).keys).isSubset(of: known), "\(service) sets a variable the code does not read")
        }
    }

    @Test func everyEndpointIsBoundByItsRoleAndReachedByNameFromTheOthers() throws {
        for (variable, role) in Self.binders {
            let binding = servicesBinding(variable, role: role)
            #expect(!binding.isEmpty, "no \(role) binds \(variable.rawValue)")
            // Each binds the same port on every interface of its own container (the first item of a list).
            var bound: Set<String> = []
            for binder in binding {
                let value = try #require(environment(binder)[variable.rawValue], "\(binder) must bind \(variable.rawValue)")
                bound.insert(value.split(separator: ",").first.map(String.init) ?? "")
            }
            #expect(bound.count == 1, "\(role) services bind \(variable.rawValue) differently")
            let endpoint = bound.first ?? ""
            #expect(endpoint.hasPrefix("tcp://0.0.0.0:"))
            let port = SocketAddress(String(endpoint.dropFirst("tcp://".count)))?.port
            for service in services.keys where Self.role(of: service) != role {
                guard let connect = environment(service)[variable.rawValue] else { continue }
                for item in connect.split(separator: ",") {
                    let address = SocketAddress(String(item.dropFirst("tcp://".count)))
                    #expect(item.hasPrefix("tcp://") && address?.port == port, "\(service) → \(variable.rawValue)")
                    let targets = reached(by: address?.host ?? "")
                    if Self.lists.contains(variable) {
                        #expect(targets.count == 1 && targets.isSubset(of: binding), "\(service) → \(variable.rawValue)")
                    } else {
                        #expect(targets == Set(binding), "\(service) → \(variable.rawValue)")
                    }
                }
            }
        }
        // Who must reach what for the stack to work at all.
        for gateway in members(of: "gateway") {
            #expect(environment(gateway)[ConfigurationVariable.ledgerEndpoint.rawValue] != nil)
        }
        #expect(environment("verifier")[ConfigurationVariable.verifierEndpoint.rawValue] != nil)
        #expect(environment("verifier")[ConfigurationVariable.refreshEndpoint.rawValue] != nil)
        // A verifier hands a gateway's receipts to the ledgers only when both name the same ones.
        for gateway in members(of: "gateway") {
            #expect(
                environment("verifier")[ConfigurationVariable.ledgerEndpoint.rawValue]
                    == environment(gateway)[ConfigurationVariable.ledgerEndpoint.rawValue])
        }
    }

    @Test func postgresIsTheOfficialImageWithAHealthCheckAndItsDataOnANamedVolume() throws {
        let postgres = try #require(services["postgres"])
        let image = try #require(postgres["image"] as? String)
        #expect(image.hasPrefix("postgres:") || image.hasPrefix("docker.io/library/postgres:"), "\(image)")
        let check = (postgres["healthcheck"] as? [String: Any])?["test"] as? [String]
        #expect(check?.joined(separator: " ").contains("pg_isready") == true)
        let volumes = try #require(postgres["volumes"] as? [String])
        let data = try #require(volumes.first { $0.hasSuffix(":/var/lib/postgresql/data") })
        let named = (document["volumes"] as? [String: Any] ?? [:]).keys
        #expect(named.contains(String(data.split(separator: ":")[0])), "\(data) is not a named volume")
    }

    @Test func twoOrMoreLedgersShareThePostgresServiceWithOneConfiguration() throws {
        let ledgers = members(of: "ledger")
        #expect(ledgers.count >= 2)
        let postgres = environment("postgres")
        for ledger in ledgers {
            let text = try #require(environment(ledger)[ConfigurationVariable.databaseURL.rawValue], "\(ledger)")
            let password = Self.password(inDatabaseURL: text)
            #expect(password == postgres["POSTGRES_PASSWORD"], "\(ledger) must use the postgres service's password")
            let url = try DatabaseURL(parsing: text.replacingOccurrences(of: password, with: "secret"))
            #expect(url.host == "postgres" && url.port == 5432)
            #expect(url.user == postgres["POSTGRES_USER"] && url.database == postgres["POSTGRES_DB"])
            // Start once PostgreSQL answers (a ledger also retries on its own).
            let postgresDependency = (services[ledger]?["depends_on"] as? [String: Any])?["postgres"] as? [String: Any]
            #expect(postgresDependency?["condition"] as? String == "service_healthy", "\(ledger)")
            #expect(services[ledger]?["deploy"] == nil, "\(ledger): not replicated; the gateways reach each ledger by name")
        }
        // The same rules on the same database; one ledger refreshes lapsed subscriptions and catches notifications
        // up, as `storekeeper up` does, so STOREKEEPER_REFRESH_PER_MINUTE stays the rate of those Apple calls.
        let refreshVariables = [
            ConfigurationVariable.refreshEndpoint.rawValue, Self.refreshOff.0,
            ConfigurationVariable.notificationCatchUpSeconds.rawValue,
        ]
        #expect(Set(ledgers.map { environment($0).filter { !refreshVariables.contains($0.key) } }).count == 1)
        #expect(servicesBinding(.refreshEndpoint, role: "ledger").count == 1)
        // Subscribers take one events and one replay endpoint, whichever ledger is elected: a name must reach them all.
        #expect(aliases(of: ledgers.first ?? "").contains { reached(by: $0) == Set(ledgers) }, "no name reaches every ledger")
    }

    @Test func twoOrMoreGatewaysEachReachEveryLedgerAndEveryVerifierReachesEveryGateway() {
        let gateways = members(of: "gateway")
        let ledgers = members(of: "ledger")
        #expect(gateways.count >= 2)
        // A DEALER connected to a shared alias would reach one ledger only: each is listed by name.
        for gateway in gateways {
            let listed = Self.hosts(environment(gateway)[ConfigurationVariable.ledgerEndpoint.rawValue])
            #expect(Set(listed) == Set(ledgers), "\(gateway)")
        }
        for verifier in members(of: "verifier") {
            let listed = Self.hosts(environment(verifier)[ConfigurationVariable.verifierEndpoint.rawValue])
            #expect(Set(listed.flatMap(reached(by:))) == Set(gateways), "\(verifier)")
            // One name for every gateway: a gateway added under it is served without touching the verifiers.
            #expect(listed.count == 1, "\(verifier) lists \(listed)")
        }
    }

    @Test func theGatewaysPublishTheirHTTPPortsAndTheVerifiersAreReplicated() throws {
        var published: [String] = []
        for gateway in members(of: "gateway") {
            let address = try #require(SocketAddress(environment(gateway)[ConfigurationVariable.httpAddress.rawValue] ?? ""))
            #expect(address.host == "0.0.0.0")
            let ports = try #require(services[gateway]?["ports"] as? [String])
            let port = try #require(ports.first { $0.hasSuffix(":\(address.port)") }, "\(gateway)")
            published.append(port.split(separator: ":").dropLast().joined(separator: ":"))
        }
        #expect(Set(published).count == published.count, "two gateways publish the same host port")
        let replicas = (services["verifier"]?["deploy"] as? [String: Any])?["replicas"] as? Int
        #expect((replicas ?? 0) >= 2)
    }

    @Test func secretsComeFromTheEnvironmentNeverFromTheFile() {
        for service in services.keys {
            for variable in ConfigurationVariable.allCases where variable.isSecret {
                guard var value = environment(service)[variable.rawValue] else { continue }
                if variable == .databaseURL { value = Self.password(inDatabaseURL: value) }
                #expect(value.hasPrefix("${") && value.hasSuffix("}"), "\(service) hard-codes \(variable.rawValue)")
            }
        }
        let password = environment("postgres")["POSTGRES_PASSWORD"] ?? ""
        #expect(password.hasPrefix("${POSTGRES_PASSWORD:?") && password.hasSuffix("}"), "a required variable")
    }

    @Test func theSimulatorIsAnOptionalProfileThatSimEnvTurnsOnAndPointsTheVerifiersAt() throws {
        #expect((services["sim"]?["profiles"] as? [String]) == ["sim"])
        let simAddress = try #require(SocketAddress(environment("sim")[ConfigurationVariable.simulatorAddress.rawValue] ?? ""))
        let gateways = members(of: "gateway")
        let gatewayPort = SocketAddress(environment(gateways.first ?? "")[ConfigurationVariable.httpAddress.rawValue] ?? "")?.port
        let notificationURL = environment("sim")[ConfigurationVariable.simulatorNotificationURL.rawValue]
        #expect(gateways.contains { notificationURL == "http://\($0):\(gatewayPort ?? 0)/v1/notifications/apple" })
        let lines = try String(contentsOf: Self.directory.appendingPathComponent("sim.env"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
        let simEnv = Dictionary(lines.compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }, uniquingKeysWith: { $1 })
        #expect(simEnv["COMPOSE_PROFILES"] == "sim")
        #expect(simEnv["STOREKEEPER_APPLE_PRODUCTION_URL"] == "http://sim:\(simAddress.port)/production/verifyReceipt")
        #expect(simEnv["STOREKEEPER_APPLE_SANDBOX_URL"] == "http://sim:\(simAddress.port)/sandbox/verifyReceipt")
        // Compose stops without a PostgreSQL password.
        #expect(simEnv["POSTGRES_PASSWORD"]?.isEmpty == false)
        // The verifiers take the URLs from there (Apple's when unset).
        #expect(environment("verifier")["STOREKEEPER_APPLE_PRODUCTION_URL"]?.hasPrefix("${STOREKEEPER_APPLE_PRODUCTION_URL:-https://") == true)
    }

    @Test func theImageIsAMultiStageReleaseBuildRunAsAnUnprivilegedUser() throws {
        let dockerfile = try String(contentsOf: Self.directory.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let lines = dockerfile.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.filter { $0.hasPrefix("FROM ") }.count >= 2)
        #expect(dockerfile.contains("swift build -c release"))
        let user = try #require(lines.last { $0.hasPrefix("USER ") })
        #expect(!["USER root", "USER 0"].contains(user))
        for service in services.keys where service != "postgres" {
            let executable = (services[service]?["command"] as? [String])?.first ?? ""
            #expect(!executable.isEmpty && dockerfile.contains(executable), "the image must hold \(executable)")
        }
    }
}
