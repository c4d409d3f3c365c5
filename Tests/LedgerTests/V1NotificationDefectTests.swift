import AppleFormats
import Contracts
import Foundation
import StorekeeperCore
import Testing

@testable import Gateway
@testable import Ledger

/// Version 1 notifications from a real body (Tests/GatewayTests/Fixtures, a
/// 2020 sandbox DID_CHANGE_RENEWAL_STATUS with 54 transactions), decoded by
/// the gateway's decoder and applied by the ledger's rules.
@Suite("Version 1 notifications: the statement's time and its subject")
struct V1NotificationDefectTests {
    static let otid = "1000000723811158"
    /// The fixture's last expiry, and its auto-renew toggle (1 minute before).
    static let lastExpiry: Int64 = 1_606_293_062_000
    static let toggled: Int64 = 1_606_293_002_000
    static let day: Int64 = 86_400_000

    static func body() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("GatewayTests/Fixtures/did-change-renewal-status-sandbox-2020.json")
        var body = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        body["password"] = "the-secret"
        return body
    }

    static func decode(_ body: [String: Any], receivedAt: Int64) throws -> NotificationApply {
        let bytes = Array(try JSONSerialization.data(withJSONObject: body))
        guard case .version1(let parsed) = try NotificationBody.read(bytes) else { throw LedgerFixture.Unexpected() }
        return try NotificationV1Decoder.decode(
            parsed, bytes: bytes, sharedSecret: Secret("the-secret"), bundleIDs: [], receivedAt: receivedAt)
    }

    /// The notification's unified_receipt as the verifier reads a verifyReceipt answer, asked at `requestDate`.
    static func receipt(_ body: [String: Any], requestDate: Int64) throws -> VerifyResult {
        var unified = try #require(body["unified_receipt"] as? [String: Any])
        unified["status"] = 0
        unified["receipt"] = ["bundle_id": "com.twigano.fashion", "request_date_ms": "\(requestDate)", "in_app": []]
        let response = try AppleResponse(body: Array(try JSONSerialization.data(withJSONObject: unified)))
        var result = ReceiptNormalizer.normalize(response, environment: .sandbox, receiptSHA256: "test")
        result.requestDateMs = requestDate
        return result
    }

    static func pending(_ body: inout [String: Any], _ change: (inout [String: Any]) -> Void) {
        var unified = body["unified_receipt"] as! [String: Any]
        var entries = unified["pending_renewal_info"] as! [[String: Any]]
        change(&entries[0])
        unified["pending_renewal_info"] = entries
        body["unified_receipt"] = unified
    }

    @Test("Defect 3: a DID_FAIL_TO_RENEW with grace is applied though its auto-renew change date is older than what is stored", arguments: StoreKind.allCases)
    func billingRetryWithGraceIsNotIgnored(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        var body = try Self.body()
        // The user presents the receipt after the auto-renew toggle.
        _ = try await ledger.record("u-1", try Self.receipt(body, requestDate: Self.toggled + 30_000), at: Self.toggled + 31_000)
        // Renewal fails at expiry; Apple grants a grace period.
        body["notification_type"] = "DID_FAIL_TO_RENEW"
        body["auto_renew_status"] = "true"
        let grace = Self.lastExpiry + 16 * Self.day
        Self.pending(&body) {
            $0["auto_renew_status"] = "1"
            $0["is_in_billing_retry_period"] = "1"
            $0["grace_period_expires_date_ms"] = "\(grace)"
            $0.removeValue(forKey: "expiration_intent")
        }
        let receivedAt = Self.lastExpiry + 60_000
        #expect(try await ledger.notify(try Self.decode(body, receivedAt: receivedAt), at: receivedAt))
        let state = try await ledger.entitlements("u-1", at: Self.lastExpiry + Self.day).first
        #expect(state?.state == .grace, "the user keeps access during grace")
        #expect(state?.active == true)
        #expect(try await ledger.subscription(Self.otid)?.autoRenew == true)
    }

    @Test("Defect 3: a REVOKE is dated when it was received, not at the last auto-renew toggle", arguments: StoreKind.allCases)
    func revokeIsNotBackdated(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        var body = try Self.body()
        _ = try await ledger.record("u-1", try Self.receipt(body, requestDate: Self.toggled + 30_000), at: Self.toggled + 31_000)
        body["notification_type"] = "REVOKE"
        let receivedAt = Self.toggled + 40 * Self.day
        #expect(try await ledger.notify(try Self.decode(body, receivedAt: receivedAt), at: receivedAt))
        let revoked = try await ledger.store.read { try $0.transactions(of: SubscriptionKey(.sandbox, Self.otid)) }
        #expect(!revoked.isEmpty)
        #expect(revoked.allSatisfy { $0.cancellationDateMs == receivedAt })
    }

    @Test("Defect 3: an auto-renew status older than a stored statement does not override it", arguments: StoreKind.allCases)
    func anOldToggleDoesNotOverrideANewerReceipt(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        var body = try Self.body()
        var newer = try Self.receipt(body, requestDate: Self.toggled + 50_000)
        newer.pendingRenewals[0].autoRenewStatus = true  // turned back on after the toggle
        _ = try await ledger.record("u-1", newer, at: Self.toggled + 51_000)
        // The notification of the older toggle (off), with no renewal info of its own.
        var unified = body["unified_receipt"] as! [String: Any]
        unified.removeValue(forKey: "pending_renewal_info")
        body["unified_receipt"] = unified
        body["original_transaction_id"] = Self.otid
        #expect(try await ledger.notify(try Self.decode(body, receivedAt: Self.toggled + 60_000), at: Self.toggled + 60_000))
        #expect(try await ledger.subscription(Self.otid)?.autoRenew == true)
    }

    /// The fixture's account with a second subscription in another group, listed first in
    /// pending_renewal_info, as Apple lists an account's subscriptions in no promised order.
    static func twoGroups() throws -> [String: Any] {
        var body = try Self.body()
        var unified = body["unified_receipt"] as! [String: Any]
        var transactions = unified["latest_receipt_info"] as! [[String: Any]]
        var other = transactions[0]
        other["transaction_id"] = "1000000800000001"
        other["original_transaction_id"] = "1000000800000001"
        other["product_id"] = "magazine_monthly"
        other["subscription_group_identifier"] = "20999999"
        other["purchase_date_ms"] = "\(lastExpiry - 60_000)"
        other["expires_date_ms"] = "\(lastExpiry + 30 * day)"
        transactions.append(other)
        unified["latest_receipt_info"] = transactions
        var pending = unified["pending_renewal_info"] as! [[String: Any]]
        pending.insert(
            [
                "original_transaction_id": "1000000800000001", "product_id": "magazine_monthly",
                "auto_renew_product_id": "magazine_monthly", "auto_renew_status": "1", "is_in_billing_retry_period": "0",
            ], at: 0)
        unified["pending_renewal_info"] = pending
        body["unified_receipt"] = unified
        return body
    }

    @Test("Defect 4: with two groups, the auto-renew change lands on the subscription of auto_renew_product_id", arguments: StoreKind.allCases)
    func theSubjectIsMatchedByProduct(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let body = try Self.twoGroups()
        let notification = try Self.decode(body, receivedAt: Self.toggled + 60_000)
        #expect(notification.originalTransactionID == Self.otid)
        #expect(!notification.subjectUnknown)
        _ = try await ledger.record("u-1", try Self.receipt(body, requestDate: Self.toggled - 60_000), at: Self.toggled)
        #expect(try await ledger.notify(notification, at: Self.toggled + 60_000))
        #expect(try await ledger.subscription(Self.otid)?.autoRenew == false)
        #expect(try await ledger.subscription("1000000800000001")?.autoRenew == true, "the other group is untouched")
    }

    @Test("Defect 4: a REVOKE about no single subscription revokes nothing, and says so", arguments: StoreKind.allCases)
    func anAmbiguousSubjectChangesNoSubscription(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        var body = try Self.twoGroups()
        body.removeValue(forKey: "auto_renew_product_id")
        body["notification_type"] = "REVOKE"
        let notification = try Self.decode(body, receivedAt: Self.toggled + 60_000)
        #expect(notification.subjectUnknown)
        #expect(notification.originalTransactionID.isEmpty)
        _ = try await ledger.record("u-1", try Self.receipt(body, requestDate: Self.toggled - 60_000), at: Self.toggled)
        #expect(try await ledger.notify(notification, at: Self.toggled + 60_000))
        let all = try await ledger.store.read { reader in
            try reader.transactions(of: SubscriptionKey(.sandbox, Self.otid))
                + reader.transactions(of: SubscriptionKey(.sandbox, "1000000800000001"))
        }
        #expect(all.allSatisfy { !$0.isRevoked })
        // Delivered again, it is still applied once.
        #expect(try await ledger.notify(notification, at: Self.toggled + 70_000) == false)
    }
}
