import Contracts
import Foundation
import Testing
import ZeroMQ

/// One receipt (a subscription and two renewals) posted by 100 users at once,
/// under each binding policy: every transaction is granted exactly once, the
/// purchase ends bound to one user, and the ledger's events say the same.
@Suite("Replay matrix: one receipt, 100 users at once", .serialized)
struct ReplayMatrixTests {
    static let users = (0..<100).map { "matrix-\($0)" }

    @Test(arguments: ["transfer", "keep"])
    func eachTransactionIsGrantedOnceAndThePurchaseEndsWithOneUser(policy: String) async throws {
        try await StackHarness.run(bindingPolicy: policy) { stack in
            let bought = try await stack.simulator.admin(
                "/admin/purchases",
                ["account": "matrix", "product_id": "com.example.pro.monthly", "type": "auto_renewable", "environment": "sandbox"])
            let receipt = try #require(bought["receipt_data"] as? String)
            let original = try #require(bought["original_transaction_id"] as? String)
            for _ in 0..<2 { try await stack.simulator.admin("/admin/renew", ["original_transaction_id": original]) }

            let answers = try await withThrowingTaskGroup(of: (String, MatrixAnswer).self) { group in
                for user in Self.users {
                    group.addTask {
                        let answer = try await stack.gateway.call("POST", "/v1/receipts", json: ["user_id": user, "receipt_data": receipt])
                        return (user, MatrixAnswer(answer))
                    }
                }
                return try await group.reduce(into: [String: MatrixAnswer]()) { $0[$1.0] = $1.1 }
            }
            let granted = answers.values.flatMap(\.granted)
            #expect(granted.count == 3 && Set(granted).count == 3, "granted: \(granted)")

            let accepted = answers.filter { $0.value.status == 200 }.map(\.key)
            if policy == "keep" {
                #expect(accepted.count == 1)
                let refused = answers.values.filter { $0.status == 409 && $0.code == "already_bound" }
                #expect(refused.count == 99)
            } else {
                #expect(accepted.count == 100)
            }

            // Exactly one user holds the subscription now.
            var holders: [String] = []
            for user in Self.users {
                let read = try await stack.gateway.call("GET", "/v1/users/\(user)/entitlements")
                if (read.json["entitlements"] as? [Any])?.isEmpty == false { holders.append(user) }
            }
            #expect(holders.count == 1)

            let events = try await stack.ledger.replayAll(ZMQContext())
            let grants = events.filter { $0.topic == "transaction.granted" }
            #expect(grants.count == 3)
            let transfers = events.filter { $0.topic == "binding.transferred" }
            if policy == "keep" {
                #expect(transfers.isEmpty)
                #expect(Set(grants.map(\.userID)) == Set(holders))
            } else {
                // The first user binds it; each of the 99 others moves it once; the last move names the holder.
                #expect(transfers.count == 99)
                #expect(transfers.last?.userID == holders.first)
            }
            #expect(events.map(\.seq) == Array(1...UInt64(events.count)))
        }
    }
}

/// What the matrix keeps of one answer.
struct MatrixAnswer: Sendable {
    let status: Int
    let code: String?
    let granted: [String]

    init(_ answer: HTTPAnswer) {
        status = answer.status
        code = (answer.json["error"] as? [String: Any])?["code"] as? String
        granted = (answer.json["granted"] as? [[String: Any]] ?? []).compactMap { $0["transaction_id"] as? String }
    }
}
