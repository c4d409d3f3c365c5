import Foundation
import Testing

/// The whole stack as real processes (gateway, two verifiers, ledger,
/// simulator) driven through the HTTP API.
@Suite("Purchase walk through the real stack", .serialized)
struct PurchaseWalkTests {
    @Test func mintVerifyReplayRefundAndRead() async throws {
        try await StackHarness.run { stack in
            let gateway = stack.gateway
            // Mint a sandbox subscription; the stack tries production first, then sandbox.
            let (receipt, transactionID) = try await stack.simulator.purchase(
                product: "com.example.pro.monthly", type: "auto_renewable", environment: "sandbox")
            let body: [String: Any] = ["user_id": "walker", "receipt_data": receipt, "transaction_id": transactionID]
            let first = try await gateway.call("POST", "/v1/receipts", json: body, requestID: "walk-1")
            #expect(first.status == 200)
            #expect(first.headers["x-request-id"] == "walk-1")
            #expect(first.json["environment"] as? String == "Sandbox")
            #expect((first.json["granted"] as? [[String: Any]])?.map { $0["transaction_id"] as? String } == [transactionID])
            #expect((first.json["transaction"] as? [String: Any])?["found"] as? Bool == true)
            #expect((first.json["entitlements"] as? [[String: Any]])?.first?["state"] as? String == "active")

            // The same receipt again: nothing new.
            let second = try await gateway.call("POST", "/v1/receipts", json: body)
            #expect(second.status == 200)
            #expect((second.json["granted"] as? [Any])?.isEmpty == true)
            #expect(second.json["already_granted"] as? [String] == [transactionID])

            // A refund: the simulator notifies the gateway, the ledger revokes.
            try await stack.simulator.admin("/admin/refunds", ["transaction_id": transactionID])
            var state: String?
            for _ in 0..<200 {
                let read = try await gateway.call("GET", "/v1/users/walker/entitlements")
                state = (read.json["entitlements"] as? [[String: Any]])?.first?["state"] as? String
                if state == "revoked" { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(state == "revoked")

            // The request id is in the log lines of the gateway and of the verifier that served it.
            #expect(gateway.process.captured.contains("walk-1"))
            #expect(stack.verifiers.contains { $0.captured.contains("walk-1") })
        }
    }

    @Test func onSIGTERMTheGatewayFinishesWhatIsInFlightThenExits() async throws {
        try await StackHarness.run { stack in
            try await stack.simulator.setFaults("production", ["latency_min_ms": 1_500, "latency_max_ms": 1_500])
            let (receipt, _) = try await stack.simulator.purchase(
                product: "com.example.gems", type: "consumable", environment: "production")
            let gateway = stack.gateway
            let inFlight = Task {
                let answer = try await gateway.call("POST", "/v1/receipts", json: ["user_id": "u", "receipt_data": receipt])
                return (answer.status, (answer.json["granted"] as? [Any])?.count)
            }
            try await stack.waitForAVerificationInFlight()
            gateway.process.signal(SIGTERM)
            let (status, granted) = try await inFlight.value
            #expect(status == 200, "the request in flight was finished")
            #expect(granted == 1)
            #expect(await gateway.process.waitForExit() == 0)
        }
    }
}
