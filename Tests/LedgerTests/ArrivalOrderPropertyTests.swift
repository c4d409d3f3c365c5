import AppleFormats
import Contracts
import Foundation
import SeededRandom
import StorekeeperCore
import Testing

@testable import Gateway
@testable import Ledger

/// One subscription's life as Apple states it: receipts (verifyReceipt
/// answers), version 1 and version 2 notifications, each with Apple's own time.
/// Applied in any arrival order, the ledger must end where applying them in
/// Apple's order ends.
@Suite("Any arrival order ends in the state of Apple's order")
struct ArrivalOrderPropertyTests {
    static let otid = NotificationV2Tests.otid
    static let t0 = Make.t0
    static let minute = Make.minute
    static let period = 5 * minute
    static let v2 = NotificationV2Tests()

    /// A message and the time Apple stated it at.
    struct Message {
        let name: String
        let at: Int64
        let work: LedgerWork
    }

    // MARK: Apple's payload shapes

    static func inApp(_ index: Int, cancelled: Int64? = nil) -> [String: Any] {
        let start = t0 + Int64(index) * period
        var entry: [String: Any] = [
            "transaction_id": index == 0 ? otid : "\(otid)-\(index)", "original_transaction_id": otid,
            "product_id": "com.example.pro.monthly", "quantity": "1", "purchase_date_ms": "\(start)",
            "original_purchase_date_ms": "\(t0)", "expires_date_ms": "\(start + period)",
            "web_order_line_item_id": "\(900 + index)", "is_trial_period": "false", "subscription_group_identifier": "20667927",
        ]
        if let cancelled {
            entry["cancellation_date_ms"] = "\(cancelled)"
            entry["cancellation_reason"] = "0"
        }
        return entry
    }

    static func pendingInfo(autoRenew: Bool, retry: Bool = false, grace: Int64? = nil) -> [String: Any] {
        var entry: [String: Any] = [
            "original_transaction_id": otid, "product_id": "com.example.pro.monthly",
            "auto_renew_product_id": "com.example.pro.monthly", "auto_renew_status": autoRenew ? "1" : "0",
            "is_in_billing_retry_period": retry ? "1" : "0",
        ]
        if let grace { entry["grace_period_expires_date_ms"] = "\(grace)" }
        return entry
    }

    /// A verifyReceipt answer asked at `at`, as the verifier normalizes it.
    static func receipt(at: Int64, _ transactions: [[String: Any]], _ pending: [String: Any]) throws -> Message {
        let body: [String: Any] = [
            "status": 0, "environment": "Sandbox",
            "receipt": ["bundle_id": "com.example.app", "request_date_ms": "\(at)", "in_app": transactions],
            "latest_receipt_info": transactions, "pending_renewal_info": [pending], "latest_receipt": "bGF0ZXN0",
        ]
        let response = try AppleResponse(body: Array(try JSONSerialization.data(withJSONObject: body)))
        var result = ReceiptNormalizer.normalize(response, environment: .sandbox, receiptSHA256: "test")
        result.requestDateMs = at
        return Message(name: "receipt@\(at - t0)", at: at, work: .record(.with {
            $0.userID = "u-1"
            $0.result = result
        }))
    }

    /// A version 1 notification received at `at`, decoded by the gateway.
    static func v1(_ type: String, at: Int64, autoRenew: Bool, toggledAt: Int64, _ transactions: [[String: Any]],
                   _ pending: [String: Any]) throws -> Message {
        let body: [String: Any] = [
            "notification_type": type, "password": "the-secret", "environment": "Sandbox", "bid": "com.example.app",
            "auto_renew_status": autoRenew ? "true" : "false", "auto_renew_product_id": "com.example.pro.monthly",
            "auto_renew_status_change_date_ms": "\(toggledAt)",
            "unified_receipt": [
                "status": 0, "environment": "Sandbox", "latest_receipt": "bGF0ZXN0", "latest_receipt_info": transactions,
                "pending_renewal_info": [pending],
            ],
        ]
        let bytes = Array(try JSONSerialization.data(withJSONObject: body))
        guard case .version1(let parsed) = try NotificationBody.read(bytes) else { throw LedgerFixture.Unexpected() }
        let notification = try NotificationV1Decoder.decode(
            parsed, bytes: bytes, sharedSecret: Secret("the-secret"), bundleIDs: [], receivedAt: at)
        return Message(name: "v1 \(type)@\(at - t0)", at: at, work: .notification(notification))
    }

    /// A version 2 notification signed at `at`, verified and decoded by the verifier.
    static func v2(_ type: String, _ subtype: String? = nil, uuid: String, at: Int64, transaction: [String: Any]? = nil,
                   renewal: [String: Any]? = nil) async throws -> Message {
        let notification = try await v2.notification(
            type, subtype, uuid: uuid, signed: at, transaction: transaction, renewal: renewal)
        return Message(name: "v2 \(type)@\(at - t0)", at: at, work: .notification(notification))
    }

    /// Four periods: renewals, auto-renew off and on again, a refund reversed
    /// (and the reversed refund seen again in a receipt and under a new UUID),
    /// then a failed renewal in grace.
    static func life() async throws -> [Message] {
        let p = period, m = minute
        let refundedAt = t0 + 2 * p + 2 * m
        let grace = t0 + 3 * p + 10 * m
        return [
            try receipt(at: t0 + m, [inApp(0)], pendingInfo(autoRenew: true)),
            try await v2("DID_RENEW", uuid: "n-1", at: t0 + p, transaction: v2.transaction(1), renewal: v2.renewal()),
            try await v2("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", uuid: "n-2", at: t0 + p + m,
                renewal: v2.renewal(autoRenew: 0)),
            try v1("DID_CHANGE_RENEWAL_STATUS", at: t0 + p + 2 * m, autoRenew: true, toggledAt: t0 + p + 2 * m,
                [inApp(0), inApp(1)], pendingInfo(autoRenew: true)),
            try await v2("DID_RENEW", uuid: "n-3", at: t0 + 2 * p, transaction: v2.transaction(2), renewal: v2.renewal()),
            try receipt(at: t0 + 2 * p + m, [inApp(0), inApp(1), inApp(2)], pendingInfo(autoRenew: true)),
            try await v2("REFUND", uuid: "n-4", at: refundedAt, transaction: v2.transaction(2, revoked: refundedAt)),
            try receipt(at: refundedAt + 30_000, [inApp(0), inApp(1), inApp(2, cancelled: refundedAt)], pendingInfo(autoRenew: true)),
            try await v2("REFUND_REVERSED", uuid: "n-5", at: t0 + 2 * p + 3 * m, transaction: v2.transaction(2)),
            try await v2("REFUND", uuid: "n-6", at: refundedAt, transaction: v2.transaction(2, revoked: refundedAt)),
            try await v2("DID_FAIL_TO_RENEW", "GRACE_PERIOD", uuid: "n-7", at: t0 + 3 * p,
                renewal: v2.renewal(retry: true, grace: grace)),
            try v1("DID_FAIL_TO_RENEW", at: t0 + 3 * p + m, autoRenew: true, toggledAt: t0 + p + 2 * m,
                [inApp(0), inApp(1), inApp(2)], pendingInfo(autoRenew: true, retry: true, grace: grace)),
        ]
    }

    /// What the entitlement is made of, and each transaction's credit.
    struct State: Equatable, CustomStringConvertible {
        var subscription: SubscriptionRecord?
        var transactions: [String: String]

        var description: String {
            let s = subscription
            return "expires \(String(describing: s?.expiresDateMs)) product \(s?.productID ?? "-") revoked \(String(describing: s?.revokedAtMs)) "
                + "autoRenew \(String(describing: s?.autoRenew)) retry \(String(describing: s?.billingRetry)) grace \(String(describing: s?.graceExpiresDateMs)) "
                + "transactions \(transactions.sorted { $0.key < $1.key })"
        }
    }

    static func finalState(_ messages: [Message]) async throws -> State {
        let ledger = try await LedgerFixture()
        // The ledger's own clock: after every statement, in arrival order.
        for (step, message) in messages.enumerated() {
            _ = try await ledger.apply(message.work, at: t0 + 30 * 24 * 60 * minute + Int64(step))
        }
        var subscription = try await ledger.subscription(otid)
        // Bookkeeping of arrival, not Apple's statement.
        subscription?.updatedAtMs = 0
        subscription?.latestReceipt = ""
        subscription?.nextRefreshAtMs = nil
        subscription?.refreshAttempts = 0
        let stored = try await ledger.store.read { try $0.transactions(of: SubscriptionKey(.sandbox, otid)) }
        return State(
            subscription: subscription,
            transactions: Dictionary(uniqueKeysWithValues: stored.map {
                ($0.key.transactionID, "\($0.isRevoked ? "revoked" : "live") to \($0.grantedTo ?? "nobody") until \(String(describing: $0.expiresDateMs))")
            }))
    }

    @Test func anyArrivalOrderEndsInTheStateOfApplesOrder() async throws {
        let life = try await Self.life()
        let inOrder = life.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        let expected = try await Self.finalState(inOrder)
        // What Apple's order gives, checked by hand once.
        let s = try #require(expected.subscription)
        #expect(s.expiresDateMs == Self.t0 + 3 * Self.period)
        #expect(s.revokedAtMs == nil)
        #expect(s.autoRenew == true)
        #expect(s.billingRetry)
        #expect(s.graceExpiresDateMs == Self.t0 + 3 * Self.period + 10 * Self.minute)
        #expect(expected.transactions.count == 3)
        #expect(expected.transactions.values.allSatisfy { $0.hasPrefix("live to u-1") }, "\(expected)")

        var generator = SplitMix64(seed: 0x5EED_0017)
        for round in 0..<150 {
            let arrival = life.shuffled(using: &generator)
            let state = try await Self.finalState(arrival)
            #expect(state == expected, "round \(round): \(arrival.map(\.name))\n got \(state)\nwant \(expected)")
            if state != expected { break }
        }
    }
}
