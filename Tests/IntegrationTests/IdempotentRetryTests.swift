import Foundation
import Testing

/// Defect 11 end to end: the ledger commits after the client gave up, and the
/// client's retry learns what was credited to it.
@Suite("Idempotent retries through the real stack", .serialized)
struct IdempotentRetryTests {
    @Test("Defect 11: a retry with the same Idempotency-Key gets granted after the client gave up; without it, already_granted")
    func aRetryAfterTheClientGaveUpLearnsWhatWasCredited() async throws {
        try await StackHarness.run { stack in
            let gateway = stack.gateway
            // Apple answers slowly enough for the client to give up while the gateway still waits, on
            // however loaded a machine (3 s was not always enough; the verification's deadline is 30 s).
            try await stack.simulator.setFaults("production", ["latency_min_ms": 10_000, "latency_max_ms": 10_000])
            let (receipt, transactionID) = try await stack.simulator.purchase(
                product: "com.example.gems", type: "consumable", environment: "production")
            let body: [String: Any] = ["user_id": "retrier", "receipt_data": receipt]
            let key = ["Idempotency-Key": "order-77-attempt"]

            // 1. The client's request is abandoned once Apple is being asked (its time-out).
            let abandoned = Task {
                try await gateway.call(
                    "POST", "/v1/receipts", json: ["user_id": "retrier", "receipt_data": receipt], headers: key
                ).status
            }
            try await stack.waitForAVerificationInFlight()
            abandoned.cancel()
            #expect((try? await abandoned.value) == nil, "the client gave up without an answer")

            // The gateway goes on: the ledger commits after the client left.
            var listed: [String] = []
            for _ in 0..<800 where listed.isEmpty {
                let page = try await gateway.call("GET", "/v1/users/retrier/transactions")
                listed = (page.json["transactions"] as? [[String: Any]])?.compactMap { $0["transaction_id"] as? String } ?? []
                if listed.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(listed == [transactionID])

            // 2. The retry with the same key: the stored answer, granted included, without asking Apple.
            try await stack.simulator.setFaults("production", ["rate_503": 1.0])
            let retried = try await gateway.call("POST", "/v1/receipts", json: body, headers: key)
            #expect(retried.status == 200)
            #expect((retried.json["granted"] as? [[String: Any]])?.compactMap { $0["transaction_id"] as? String } == [transactionID])
            let again = try await gateway.call("POST", "/v1/receipts", json: body, headers: key)
            #expect(again.body == retried.body, "byte for byte")

            // The same key with another body is refused.
            let other = try await gateway.call(
                "POST", "/v1/receipts", json: ["user_id": "someone-else", "receipt_data": receipt], headers: key)
            #expect(other.status == 422)
            #expect((other.json["error"] as? [String: Any])?["code"] as? String == "idempotency_key_reused")

            // 3. A retry without the key asks Apple again and learns the credit was earlier.
            try await stack.simulator.setFaults("production", [:])
            let plain = try await gateway.call("POST", "/v1/receipts", json: body)
            #expect(plain.status == 200)
            #expect((plain.json["granted"] as? [Any])?.isEmpty == true)
            #expect(plain.json["already_granted"] as? [String] == [transactionID])
        }
    }
}
