import Contracts
import Foundation
import Testing
import ZeroMQ

/// No missed notification, across real processes: the simulator's
/// notification to the gateway is lost; the ledger's catch-up finds it in
/// the App Store Server API's notification history within its period and
/// applies it; the event stream shows it exactly once, and goes on doing so
/// across a ledger restart while the catch-up keeps reading spans that
/// overlap it.
@Suite("Notification catch-up", .serialized)
struct NotificationCatchUpTests {
    static let recovered = "storekeeper_notification_catchup_recovered_total"

    /// Buys a subscription and has the gateway record it for `user`; its transaction id.
    func purchase(_ stack: ServerAPIStack, account: String, user: String) async throws -> String {
        let bought = try await stack.buy("com.example.pro.monthly", type: "auto_renewable", account: account)
        #expect(try await stack.record(bought, for: user).status == 200)
        return try #require(bought["transaction_id"] as? String)
    }

    /// Refunds it at the simulator while its deliveries are lost.
    func refundWhileLost(_ stack: ServerAPIStack, _ transactionID: String) async throws {
        try await stack.simulator.admin("/admin/notifications/faults", ["drop": true])
        try await stack.simulator.admin("/admin/refunds", ["transaction_id": transactionID])
        try await stack.simulator.admin("/admin/notifications/faults", ["drop": false])
    }

    static func revoked(_ transactionID: String) -> @Sendable (LedgerEvent) -> Bool {
        { $0.topic == "transaction.revoked" && $0.transactionRevoked.transactionID == transactionID }
    }

    @Test func aLostNotificationIsAppliedByTheCatchUpOnceAndOnlyOnce() async throws {
        try await ServerAPIStack.run(ledgerEnvironment: [
            "STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS": "1", "STOREKEEPER_REFRESH_PER_MINUTE": "0",
        ]) { stack in
            // 1. The simulator's REFUND notification never reaches the gateway.
            let first = try await purchase(stack, account: "lost-1", user: "u-lost")
            try await refundWhileLost(stack, first)
            #expect(stack.simulator.process.captured.contains("notification dropped"))
            // 2. The catch-up applies it within its period (the gateway never saw it: the request id is the catch-up's).
            let revoked = try await stack.events.first("revoking \(first)", where: Self.revoked(first))
            #expect(revoked.requestID.hasPrefix("catchup-"), "\(revoked.requestID)")
            #expect(revoked.userID == "u-lost")
            try await waitForCounter(stack, Self.recovered, toReach: 1)

            // The ledger is killed; another notification is lost meanwhile; the ledger starts again,
            // its cursor in the database.
            let second = try await purchase(stack, account: "lost-2", user: "u-lost-2")
            await stack.ledger.kill()
            try await refundWhileLost(stack, second)
            try await stack.ledger.restart()
            try await stack.events.first("revoking \(second)", where: Self.revoked(second))
            try await waitForCounter(stack, Self.recovered, toReach: 1)

            // 3. The stream holds each exactly once, though every span since re-read the first (spans overlap).
            let replayed = try await stack.ledger.replayAll(ZMQContext())
            #expect(replayed.filter(Self.revoked(first)).count == 1)
            #expect(replayed.filter(Self.revoked(second)).count == 1)
            #expect(stack.events.all.filter(Self.revoked(first)).count == 1)
        }
    }

    /// Waits (bounded) until the ledger's counter reads `value`; the catch-up counts after the commit the stream shows.
    func waitForCounter(_ stack: ServerAPIStack, _ name: String, toReach value: Double) async throws {
        for _ in 0..<600 {
            if try await stack.ledgerCounter(name) >= value { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await stack.ledgerCounter(name) == value)
    }
}
