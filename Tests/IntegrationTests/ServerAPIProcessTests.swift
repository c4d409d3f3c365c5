import AppleJWS
import Crypto
import Foundation
import StorekeeperCore
import Testing

/// The App Store Server API across processes: a verifier refuses to start on
/// a bad `.p8` (exit 78, naming the variable, never showing the key), and
/// `storekeeper apple --sim` reads what `storekeeper-sim` sold, with no Apple account.
@Suite(.serialized) struct ServerAPIProcessTests {
    static let credentials = [
        "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper", "STOREKEEPER_APPLE_ISSUER_ID": SimulatorServerAPIKey.issuerID,
        "STOREKEEPER_APPLE_KEY_ID": SimulatorServerAPIKey.keyID, "STOREKEEPER_APPLE_APP_ID": "1234567890",
    ]

    func keyFile(_ contents: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sk-\(UUID().uuidString).p8").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts `storekeeper-verifier` with `environment` and waits for it to exit on its own.
    func verifierExit(_ environment: [String: String]) async throws -> (status: Int32?, output: String) {
        let child = try ChildProcess("storekeeper-verifier", environment: environment)
        let status = await child.waitForOwnExit()
        return (status, child.captured)
    }

    @Test func aMissingKeyFileExits78NamingTheVariable() async throws {
        let (status, output) = try await verifierExit(
            Self.credentials.merging(["STOREKEEPER_APPLE_PRIVATE_KEY_FILE": "/nonexistent/AuthKey.p8"]) { $1 })
        #expect(status == 78)
        #expect(output.contains("STOREKEEPER_APPLE_PRIVATE_KEY_FILE"), "\(output)")
    }

    @Test func aKeyOnAnotherCurveExits78WithoutShowingIt() async throws {
        let pem = P384.Signing.PrivateKey().pemRepresentation
        let path = try keyFile(pem)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (status, output) = try await verifierExit(Self.credentials.merging(["STOREKEEPER_APPLE_PRIVATE_KEY_FILE": path]) { $1 })
        #expect(status == 78)
        #expect(output.contains("STOREKEEPER_APPLE_PRIVATE_KEY_FILE"), "\(output)")
        for line in pem.split(separator: "\n") where !line.hasPrefix("-----") {
            #expect(!output.contains(line), "the key must never be printed")
        }
    }

    @Test func aPartialSetOfCredentialsExits78NamingTheMissingOne() async throws {
        let (status, output) = try await verifierExit([
            "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper", "STOREKEEPER_APPLE_ISSUER_ID": "issuer",
        ])
        #expect(status == 78)
        #expect(output.contains("STOREKEEPER_APPLE_KEY_ID"), "\(output)")
    }

    @Test(arguments: ["server_api", "history"])
    func serverAPIReceiptsWithoutCredentialsOrAnUnknownModeExit78NamingTheSetting(_ mode: String) async throws {
        let (status, output) = try await verifierExit([
            "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper", "STOREKEEPER_RECEIPT_VERIFICATION": mode,
        ])
        #expect(status == 78)
        #expect(output.contains("STOREKEEPER_RECEIPT_VERIFICATION"), "\(output)")
    }

    @Test func aGoodKeyStartsTheVerifierWithTheServerAPIOn() async throws {
        let path = try keyFile(SimulatorServerAPIKey.privateKeyPEM)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let child = try ChildProcess(
            "storekeeper-verifier", environment: Self.credentials.merging(["STOREKEEPER_APPLE_PRIVATE_KEY_FILE": path]) { $1 })
        let started = await child.waitForOutput(containing: "started")
        let status = await child.stop()
        #expect(started, "\(child.captured)")
        #expect(status == 0)
        #expect(child.captured.contains("key \(SimulatorServerAPIKey.keyID)"), "\(child.captured)")
        #expect(!child.captured.contains("BEGIN PRIVATE KEY"))
    }

    @Test func theCLIReadsWhatTheSimulatorSoldWithNoAppleAccount() async throws {
        try await withSimulator(["STOREKEEPER_SIM_PAGE_SIZE": "2"]) { simulator in
            let bought = try await simulator.admin(
                "/admin/purchases",
                ["account": "walk", "product_id": "com.example.pro.monthly", "type": "auto_renewable", "environment": "sandbox"])
            let original = try #require(bought["original_transaction_id"] as? String)
            for _ in 0..<2 { try await simulator.admin("/admin/renew", ["original_transaction_id": original]) }
            let sold = try await simulator.admin(
                "/admin/purchases",
                ["account": "walk", "product_id": "com.example.removeads", "type": "non_consumable", "environment": "production"])

            let history = try await cli(["history", original], simulator)
            #expect(history.status == 0, "\(history.output)")
            #expect(history.output.contains("history (Sandbox): 3 transactions"), "\(history.output)")

            let status = try await cli(["status", original, "--json"], simulator)
            #expect(status.status == 0, "\(status.output)")
            let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
            let subscriptions = try #require(object?["subscriptions"] as? [[String: Any]])
            #expect(subscriptions.first?["status"] as? Int == 1)

            let order = try await cli(["lookup", try #require(sold["order_id"] as? String)], simulator)
            #expect(order.output.contains(try #require(sold["transaction_id"] as? String)), "\(order.output)")

            let extended = try await cli(["extend", original, "--days", "3"], simulator)
            #expect(extended.status == 0 && extended.output.contains("extended (Sandbox)"), "\(extended.output)")

            let test = try await cli(["test-notification", "--environment", "sandbox", "--wait", "3"], simulator)
            #expect(test.status == 0 && test.output.contains("TEST notification"), "\(test.output)")

            let unknown = try await cli(["history", "1999999999999999"], simulator)
            #expect(unknown.status == 1)
            #expect(unknown.output.contains("server_api_not_found"), "\(unknown.output)")
        }
    }

    @Test func theCLITrustsAnHTTPSSimulatorThroughTheCAFileAsTheVerifiersDo() async throws {
        let tlsAddress = "127.0.0.1:\(try freeLoopbackPort())"
        let caFile = try SimulatorTLSCertificate.writeCertificate()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        try await withSimulator(["STOREKEEPER_SIM_TLS_ADDR": tlsAddress]) { simulator in
            let bought = try await simulator.admin(
                "/admin/purchases",
                ["account": "tls", "product_id": "com.example.pro.monthly", "type": "auto_renewable", "environment": "sandbox"])
            let original = try #require(bought["original_transaction_id"] as? String)
            let https = "https://\(tlsAddress)"

            let trusted = try await cli(["history", original], url: https, environment: ["STOREKEEPER_APPLE_CA_FILE": caFile])
            #expect(trusted.status == 0, "\(trusted.output)")
            #expect(trusted.output.contains("history (Sandbox): 1 transaction"), "\(trusted.output)")
            // The system's certificates do not know the simulator's: Apple unreachable until the deadline (3 s: time
            // for more than one try, should the first take long on a loaded machine).
            let untrusted = try await cli(["history", original], url: https, environment: ["STOREKEEPER_VERIFY_DEADLINE_MS": "3000"])
            #expect(untrusted.status == 75, "\(untrusted.output)")
            #expect(untrusted.output.contains("server_api_unavailable (no answer: TLS failure"), "\(untrusted.output)")
            let unreadable = try await cli(
                ["history", original], url: https, environment: ["STOREKEEPER_APPLE_CA_FILE": "/nonexistent/ca.pem"])
            #expect(unreadable.status == 78)
            #expect(unreadable.output.contains("STOREKEEPER_APPLE_CA_FILE"), "\(unreadable.output)")
        }
    }

    /// Runs `body` with a simulator started with `environment`, and stops it afterwards, whatever `body` did.
    func withSimulator(_ environment: [String: String], _ body: (SimulatorProcess) async throws -> Void) async throws {
        let simulator = try await SimulatorProcess(extraEnvironment: environment)
        do {
            try await body(simulator)
        } catch {
            await simulator.stop()
            throw error
        }
        await simulator.stop()
    }

    /// `storekeeper apple --sim --sim-url ... ARGS`, to its end.
    func cli(_ arguments: [String], _ simulator: SimulatorProcess) async throws -> (status: Int32?, output: String) {
        try await cli(arguments, url: simulator.base)
    }

    func cli(
        _ arguments: [String], url: String, environment: [String: String] = [:]
    ) async throws -> (status: Int32?, output: String) {
        let child = try ChildProcess(
            "storekeeper", arguments: ["apple"] + [arguments[0], "--sim", "--sim-url", url] + arguments.dropFirst(),
            environment: environment.merging(["STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper"]) { $1 })
        let status = await child.waitForOwnExit(timeout: .seconds(60))
        return (status, child.captured)
    }
}
