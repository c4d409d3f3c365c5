import Foundation
import Testing
import Yams

@testable import StorekeeperCore

/// compose/ against the contract: no Docker engine runs here, so the file
/// itself is checked: services, executables, variables, how the ZeroMQ
/// endpoints pair up (who binds, who connects to whom), ports and volumes.
@Suite struct ComposeFileTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("compose")

    /// Which service binds each endpoint; every other service connects to it by name.
    static let binders: [ConfigurationVariable: String] = [
        .eventsEndpoint: "ledger", .ledgerEndpoint: "ledger", .replayEndpoint: "ledger", .refreshEndpoint: "ledger",
        .verifierEndpoint: "gateway",
    ]

    let services: [String: [String: Any]]

    init() throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        services = try #require(document["services"] as? [String: [String: Any]])
    }

    func environment(_ service: String) -> [String: String] {
        (services[service]?["environment"] as? [String: Any] ?? [:]).mapValues { "\($0)" }
    }

    @Test func eachServiceRunsItsExecutableWithKnownVariablesOnly() {
        let executables = ["ledger": "storekeeper-ledger", "verifier": "storekeeper-verifier",
                           "gateway": "storekeeper-gateway", "sim": "storekeeper-sim"]
        #expect(Set(services.keys) == Set(executables.keys))
        let known = Set(ConfigurationVariable.allCases.map(\.rawValue))
        for (service, executable) in executables {
            #expect((services[service]?["command"] as? [String])?.first == executable, "\(service)")
            #expect(Set(environment(service).keys).isSubset(of: known), "\(service) sets a variable the code does not read")
        }
    }

    @Test func everyEndpointIsBoundByOneServiceAndReachedByNameFromTheOthers() throws {
        for (variable, binder) in Self.binders {
            let bound = try #require(environment(binder)[variable.rawValue], "\(binder) must bind \(variable.rawValue)")
            #expect(bound.hasPrefix("tcp://0.0.0.0:"))
            let port = bound.split(separator: ":").last.map(String.init)
            for service in services.keys where service != binder {
                guard let connect = environment(service)[variable.rawValue] else { continue }
                #expect(connect == "tcp://\(binder):\(port ?? "")", "\(service) → \(variable.rawValue)")
            }
        }
        // Who must reach what for the stack to work at all.
        #expect(environment("gateway")[ConfigurationVariable.ledgerEndpoint.rawValue] != nil)
        #expect(environment("verifier")[ConfigurationVariable.verifierEndpoint.rawValue] != nil)
        #expect(environment("verifier")[ConfigurationVariable.refreshEndpoint.rawValue] != nil)
    }

    @Test func theGatewayPublishesItsHTTPPortAndTheLedgerKeepsItsDataOnAVolume() throws {
        let address = try #require(SocketAddress(environment("gateway")[ConfigurationVariable.httpAddress.rawValue] ?? ""))
        #expect(address.host == "0.0.0.0")
        let ports = try #require(services["gateway"]?["ports"] as? [String])
        #expect(ports.contains { $0.hasSuffix(":\(address.port)") })
        let dataDirectory = try #require(environment("ledger")[ConfigurationVariable.dataDirectory.rawValue])
        let volumes = try #require(services["ledger"]?["volumes"] as? [String])
        #expect(volumes.contains { $0.hasSuffix(":\(dataDirectory)") })
        let replicas = (services["verifier"]?["deploy"] as? [String: Any])?["replicas"] as? Int
        #expect((replicas ?? 0) >= 2)
        #expect(services["ledger"]?["deploy"] == nil, "the ledger is the single writer: never replicated")
    }

    @Test func secretsComeFromTheEnvironmentNeverFromTheFile() {
        for service in services.keys {
            for variable in ConfigurationVariable.allCases where variable.isSecret {
                guard let value = environment(service)[variable.rawValue] else { continue }
                #expect(value.hasPrefix("${") && value.hasSuffix("}"), "\(service) hard-codes \(variable.rawValue)")
            }
        }
    }

    @Test func theSimulatorIsAnOptionalProfileThatSimEnvTurnsOnAndPointsTheVerifiersAt() throws {
        #expect((services["sim"]?["profiles"] as? [String]) == ["sim"])
        let simAddress = try #require(SocketAddress(environment("sim")[ConfigurationVariable.simulatorAddress.rawValue] ?? ""))
        let gatewayPort = SocketAddress(environment("gateway")[ConfigurationVariable.httpAddress.rawValue] ?? "")?.port
        #expect(environment("sim")[ConfigurationVariable.simulatorNotificationURL.rawValue]
            == "http://gateway:\(gatewayPort ?? 0)/v1/notifications/apple")
        let lines = try String(contentsOf: Self.directory.appendingPathComponent("sim.env"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
        let simEnv = Dictionary(lines.compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }, uniquingKeysWith: { $1 })
        #expect(simEnv["COMPOSE_PROFILES"] == "sim")
        #expect(simEnv["STOREKEEPER_APPLE_PRODUCTION_URL"] == "http://sim:\(simAddress.port)/production/verifyReceipt")
        #expect(simEnv["STOREKEEPER_APPLE_SANDBOX_URL"] == "http://sim:\(simAddress.port)/sandbox/verifyReceipt")
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
        for service in services.keys {
            let executable = (services[service]?["command"] as? [String])?.first ?? ""
            #expect(dockerfile.contains(executable), "the image must hold \(executable)")
        }
    }
}
