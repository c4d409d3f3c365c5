import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// Notification history and test notifications: what the simulator sent, back
/// through the Server API, verified and decoded as the ledger applies it.
@Suite("Server API against the simulator: notifications")
struct NotificationEndpointTests {
    @Test func theHistoryHoldsEveryNotificationSentAcrossPages() async throws {
        try await ServerAPIHarness.with(pageSize: 2) { harness in
            let start = harness.simulator.now
            let subscription = try harness.buy(environment: .production)
            let notifier = harness.notifier
            for _ in 0..<2 {
                await notifier.deliver(try harness.simulator.renewNow(originalTransactionID: subscription.originalTransactionID).notifications)
            }
            await notifier.deliver([try harness.simulator.refund(transactionID: subscription.transactionID, reason: 0)])
            let other = try harness.buy("com.example.gems", type: .consumable, environment: .production, account: "another")
            await notifier.deliver([try harness.simulator.refund(transactionID: other.transactionID, reason: 1)])
            let client = try harness.client()
            let history = try await client.notificationHistory(from: start, to: harness.simulator.now)
            #expect(history.map(\.apply.notificationType) == ["DID_RENEW", "DID_RENEW", "REFUND", "REFUND"])
            #expect(history.allSatisfy { $0.apply.environment == .production })
            #expect(history.allSatisfy { $0.sendAttempts.map(\.sendAttemptResult) == ["SUCCESS"] })
            // What was delivered is what the history holds: the same notifications.
            let deliveredIDs = try harness.delivered.all.map { try NotificationEndpointTests.notificationID(ofBody: $0) }
            #expect(deliveredIDs == history.map(\.apply.notificationID))
            #expect(harness.paths.filter { $0.contains("/notifications/history") }.count == 2, "two pages of two")

            // A transaction id keeps its customer's notifications; a type keeps that type.
            let customer = try await client.notificationHistory(
                from: start, to: harness.simulator.now, transactionID: subscription.transactionID)
            #expect(customer.map(\.apply.originalTransactionID) == Array(repeating: subscription.originalTransactionID, count: 3))
            let refunds = try await client.notificationHistory(
                from: start, to: harness.simulator.now, notificationType: "REFUND")
            #expect(refunds.map(\.apply.originalTransactionID) == [subscription.originalTransactionID, other.originalTransactionID])
            let sandbox = try await client.notificationHistory(from: start, to: harness.simulator.now, environment: .sandbox)
            #expect(sandbox.isEmpty)
        }
    }

    @Test func aTestNotificationIsSentAndItsStatusTellsHowItWent() async throws {
        try await ServerAPIHarness.with { harness in
            let client = try harness.client()
            let token = try await client.requestTestNotification(environment: .sandbox)
            let status = try await client.testNotificationStatus(token, environment: .sandbox)
            #expect(status.apply.notificationType == "TEST")
            #expect(status.apply.environment == .sandbox)
            #expect(status.sendAttempts.map(\.sendAttemptResult) == ["SUCCESS"])
            #expect(harness.delivered.all.count == 1)
            await #expect(throws: ServerAPIError.notFound(.testNotificationNotFound)) {
                try await client.testNotificationStatus("no-such-token", environment: .sandbox)
            }
            // A token of the sandbox is unknown to production.
            await #expect(throws: ServerAPIError.notFound(.testNotificationNotFound)) {
                try await client.testNotificationStatus(token, environment: .production)
            }
        }
    }

    static func notificationID(ofBody body: [UInt8]) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        let jws = try #require(object?["signedPayload"] as? String)
        let payload = try #require(Data(base64Encoded: base64(jws.split(separator: ".")[1])))
        return try #require((try JSONSerialization.jsonObject(with: payload) as? [String: Any])?["notificationUUID"] as? String)
    }

    private static func base64(_ url: Substring) -> String {
        let standard = url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return standard + String(repeating: "=", count: (4 - standard.count % 4) % 4)
    }
}
