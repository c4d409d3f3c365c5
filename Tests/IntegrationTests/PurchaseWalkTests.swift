import Foundation
import Testing

/// The whole stack as real processes (gateway, two verifiers, ledger,
/// simulator) walking one purchase through the HTTP API: mint, verify, verify
/// again, refund with its notification, read entitlements.
@Suite("Purchase walk through the real stack", .serialized)
struct PurchaseWalkTests {
    @Test func mintVerifyReplayRefundAndRead() async throws {
        let gatewayPort = try GatewayProcess.reservePort()
        let simulator = try await SimulatorProcess(extraEnvironment: [
            "STOREKEEPER_SIM_NOTIFICATION_URL": "http://127.0.0.1:\(gatewayPort)/v1/notifications/apple"
        ])
        let ledger = try await LedgerProcess(extraEnvironment: ["STOREKEEPER_REFRESH_PER_MINUTE": "0"])
        let gateway = try await GatewayProcess(port: gatewayPort, ledger: ledger)
        var verifiers: [ChildProcess] = []
        do {
            for _ in 0..<2 {
                verifiers.append(try ChildProcess(
                    "storekeeper-verifier",
                    environment: [
                        "STOREKEEPER_VERIFIER_ENDPOINT": gateway.verifierEndpoint,
                        "STOREKEEPER_REFRESH_ENDPOINT": ledger.environment["STOREKEEPER_REFRESH_ENDPOINT"] ?? "",
                        "STOREKEEPER_APPLE_PRODUCTION_URL": simulator.productionURL,
                        "STOREKEEPER_APPLE_SANDBOX_URL": simulator.sandboxURL,
                        "STOREKEEPER_APPLE_SHARED_SECRET": SimulatorProcess.secret,
                        "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper", "STOREKEEPER_LOG_LEVEL": "info",
                    ]))
            }
            try await gateway.waitUntilReady()

            // Mint a sandbox subscription; the stack tries production first, then sandbox.
            let (receipt, transactionID) = try await simulator.purchase(
                product: "com.example.pro.monthly", type: "auto_renewable", environment: "sandbox")
            let body: [String: Any] = ["user_id": "walker", "receipt_data": receipt, "transaction_id": transactionID]
            let first = try await gateway.call("POST", "/v1/receipts", json: body, requestID: "walk-1")
            #expect(first.status == 200)
            #expect(first.headers["x-request-id"] == "walk-1")
            #expect(first.json["environment"] as? String == "Sandbox")
            #expect((first.json["granted"] as? [[String: Any]])?.map { $0["transaction_id"] as? String } == [transactionID])
            #expect((first.json["transaction"] as? [String: Any])?["found"] as? Bool == true)
            let entitlement = (first.json["entitlements"] as? [[String: Any]])?.first
            #expect(entitlement?["state"] as? String == "active")

            // The same receipt again: nothing new.
            let second = try await gateway.call("POST", "/v1/receipts", json: body)
            #expect(second.status == 200)
            #expect((second.json["granted"] as? [Any])?.isEmpty == true)
            #expect(second.json["already_granted"] as? [String] == [transactionID])

            // A refund: the simulator notifies the gateway, the ledger revokes.
            try await simulator.admin("/admin/refunds", ["transaction_id": transactionID])
            var state: String?
            for _ in 0..<200 {
                let read = try await gateway.call("GET", "/v1/users/walker/entitlements")
                state = (read.json["entitlements"] as? [[String: Any]])?.first?["state"] as? String
                if state == "revoked" { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(state == "revoked")

            // The request id is in the log lines of the gateway, a verifier and the ledger alike.
            #expect(gateway.process.captured.contains("walk-1"))
            #expect(verifiers.contains { $0.captured.contains("walk-1") })
        } catch {
            Issue.record("\(error)")
        }
        for verifier in verifiers { #expect(await verifier.stop() == 0) }
        #expect(await gateway.stop() == 0)
        #expect(await ledger.stop() == 0)
        await simulator.stop()
    }
}
