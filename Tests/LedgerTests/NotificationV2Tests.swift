import AppleJWS
import Contracts
import Foundation
import Testing

@testable import Ledger
@testable import Verifier

/// Every version 2 notification type, as the App Store signs it (here with
/// the simulator's test chain), verified and decoded by the verifier's
/// `SignedDataReader`, then applied by the ledger's rules: what each one
/// changes, and that a notificationUUID applies once.
@Suite("Notifications version 2: every type, signed, decoded and applied")
struct NotificationV2Tests {
    let t0 = Make.t0
    let minute = Make.minute
    static let otid = "2000"
    static let reader = SignedDataReader(
        verifier: SignedDataVerifier(
            trustedRoots: try! SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM])),
        bundleIDs: ["com.example.app"])

    static func sign(_ claims: [String: Any]) throws -> String {
        try SignedDataSigner.simulator().sign(Array(try JSONSerialization.data(withJSONObject: claims)))
    }

    /// Period `index` of subscription 2000 (5 minutes each from t0); id 2000, then 2000-1, ...
    func transaction(_ index: Int, revoked: Int64? = nil, expiresExtra: Int64 = 0) -> [String: Any] {
        let start = t0 + Int64(index) * 5 * minute
        var claims: [String: Any] = [
            "transactionId": index == 0 ? Self.otid : "\(Self.otid)-\(index)", "originalTransactionId": Self.otid,
            "bundleId": "com.example.app", "productId": "com.example.pro.monthly", "purchaseDate": start,
            "originalPurchaseDate": t0, "expiresDate": start + 5 * minute + expiresExtra, "quantity": 1,
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": start,
            "environment": "Sandbox",
        ]
        if let revoked {
            claims["revocationDate"] = revoked
            claims["revocationReason"] = 0
        }
        return claims
    }

    func renewal(
        autoRenew: Int = 1, product: String = "com.example.pro.monthly", retry: Bool = false, grace: Int64? = nil,
        intent: Int? = nil, priceIncrease: Int? = nil
    ) -> [String: Any] {
        var claims: [String: Any] = [
            "originalTransactionId": Self.otid, "productId": "com.example.pro.monthly", "autoRenewProductId": product,
            "autoRenewStatus": autoRenew, "isInBillingRetryPeriod": retry, "signedDate": t0, "environment": "Sandbox",
        ]
        if let grace { claims["gracePeriodExpiresDate"] = grace }
        if let intent { claims["expirationIntent"] = intent }
        if let priceIncrease { claims["priceIncreaseStatus"] = priceIncrease }
        return claims
    }

    /// The signedPayload of one notification, as the verifier decodes it.
    func notification(
        _ type: String, _ subtype: String? = nil, uuid: String = UUID().uuidString, signed: Int64,
        transaction: [String: Any]? = nil, renewal: [String: Any]? = nil
    ) async throws -> NotificationApply {
        var data: [String: Any] = ["bundleId": "com.example.app", "environment": "Sandbox"]
        if let transaction { data["signedTransactionInfo"] = try Self.sign(transaction) }
        if let renewal { data["signedRenewalInfo"] = try Self.sign(renewal) }
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "signedDate": signed, "data": data]
        if let subtype { payload["subtype"] = subtype }
        return try await Self.reader.notification(try Self.sign(payload), receivedAtMs: signed)
    }

    /// u-1 holds subscription 2000, first period (t0 to t0+5 min), presented as a StoreKit 2 transaction.
    func subscribed() async throws -> LedgerFixture {
        let ledger = try await LedgerFixture()
        let result = try await Self.reader.transaction(try Self.sign(transaction(0)), nowMs: t0)
        let outcome = try await ledger.record("u-1", result, at: t0 + minute)
        #expect(outcome.granted.map(\.transactionID) == [Self.otid])
        return ledger
    }

    func state(_ ledger: LedgerFixture, at time: Int64) async throws -> Entitlement? {
        try await ledger.entitlements("u-1", at: time).first
    }

    @Test(arguments: StoreKind.allCases) func subscribedBeforeTheAppReportsItIsKeptUnclaimedThenCreditedOnce(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        #expect(try await ledger.notify(try await notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, transaction: transaction(0), renewal: renewal()), at: t0))
        #expect(try await ledger.headSeq() == 0, "nobody to credit yet")
        let result = try await Self.reader.transaction(try Self.sign(transaction(0)), nowMs: t0)
        #expect(try await ledger.record("u-1", result, at: t0 + minute).granted.map(\.transactionID) == [Self.otid])
        #expect(try await ledger.record("u-1", result, at: t0 + 2 * minute).alreadyGranted == [Self.otid])
        #expect(try await state(ledger, at: t0 + 2 * minute)?.autoRenew == true)
    }

    @Test(arguments: [("DID_RENEW", nil), ("DID_RENEW", "BILLING_RECOVERY"), ("OFFER_REDEEMED", "UPGRADE")] as [(String, String?)])
    func renewalsCreditTheHolderAndExtend(_ type: String, _ subtype: String?) async throws {
        let ledger = try await subscribed()
        let head = try await ledger.headSeq()
        #expect(try await ledger.notify(try await notification(type, subtype, signed: t0 + 5 * minute, transaction: transaction(1), renewal: renewal()), at: t0 + 5 * minute))
        let granted = try await ledger.events(after: head).filter { $0.topic == "transaction.granted" }
        #expect(granted.map(\.transactionGranted.grant.transactionID) == ["\(Self.otid)-1"])
        #expect(granted.map(\.userID) == ["u-1"])
        let entitlement = try await state(ledger, at: t0 + 7 * minute)
        #expect(entitlement?.state == .active && entitlement?.expiresDateMs == t0 + 10 * minute)
    }

    @Test func preferenceStatusAndPriceIncreaseChangeTheSubscription() async throws {
        let ledger = try await subscribed()
        #expect(try await ledger.notify(try await notification("DID_CHANGE_RENEWAL_PREF", "UPGRADE", signed: t0 + 2 * minute, transaction: transaction(0), renewal: renewal(product: "com.example.pro.yearly")), at: t0 + 2 * minute))
        #expect(try await ledger.subscription(Self.otid)?.autoRenewProductID == "com.example.pro.yearly")
        #expect(try await ledger.notify(try await notification("PRICE_INCREASE", "ACCEPTED", signed: t0 + 3 * minute, transaction: transaction(0), renewal: renewal(product: "com.example.pro.yearly", priceIncrease: 1)), at: t0 + 3 * minute))
        #expect(try await ledger.subscription(Self.otid)?.priceConsentStatus == 1)
        #expect(try await ledger.notify(try await notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 4 * minute, transaction: transaction(0), renewal: renewal(autoRenew: 0)), at: t0 + 4 * minute))
        #expect(try await state(ledger, at: t0 + 4 * minute)?.autoRenew == false)
    }

    @Test func failedRenewalsGraceAndExpiry() async throws {
        let ledger = try await subscribed()
        let expiry = t0 + 5 * minute
        // Billing failed with a grace period: access goes on until it ends.
        #expect(try await ledger.notify(try await notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", signed: expiry, transaction: transaction(0), renewal: renewal(retry: true, grace: expiry + 10 * minute)), at: expiry))
        var entitlement = try await state(ledger, at: expiry + minute)
        #expect(entitlement?.state == .grace && entitlement?.active == true)
        // The grace period ended, Apple still retries billing: no access.
        #expect(try await ledger.notify(try await notification("GRACE_PERIOD_EXPIRED", signed: expiry + 10 * minute, transaction: transaction(0), renewal: renewal(retry: true, grace: expiry + 10 * minute)), at: expiry + 10 * minute))
        entitlement = try await state(ledger, at: expiry + 11 * minute)
        #expect(entitlement?.state == .billingRetry && entitlement?.active == false)
        // Apple gave up: expired, not renewing.
        #expect(try await ledger.notify(try await notification("EXPIRED", "BILLING_RETRY", signed: expiry + 20 * minute, transaction: transaction(0), renewal: renewal(autoRenew: 0, intent: 2)), at: expiry + 20 * minute))
        entitlement = try await state(ledger, at: expiry + 21 * minute)
        #expect(entitlement?.state == .expired && entitlement?.autoRenew == false)
        #expect(try await ledger.subscription(Self.otid)?.expirationIntent == 2)
    }

    @Test func aFailedRenewalWithoutGraceIsBillingRetry() async throws {
        let ledger = try await subscribed()
        #expect(try await ledger.notify(try await notification("DID_FAIL_TO_RENEW", signed: t0 + 5 * minute, transaction: transaction(0), renewal: renewal(retry: true)), at: t0 + 5 * minute))
        #expect(try await state(ledger, at: t0 + 6 * minute)?.state == .billingRetry)
    }

    @Test func refundsDeclinedReversedAndRevoked() async throws {
        let ledger = try await subscribed()
        // A declined refund request takes nothing away (its renewal info is the first the ledger hears: auto-renew on).
        let head = try await ledger.headSeq()
        #expect(try await ledger.notify(try await notification("REFUND_DECLINED", signed: t0 + minute, transaction: transaction(0), renewal: renewal()), at: t0 + 2 * minute))
        #expect(try await ledger.topics(after: head).allSatisfy { !$0.hasPrefix("transaction.") })
        #expect(try await state(ledger, at: t0 + 2 * minute)?.state == .active)
        // Refunded: revoked.
        #expect(try await ledger.notify(try await notification("REFUND", signed: t0 + 2 * minute, transaction: transaction(0, revoked: t0 + 2 * minute), renewal: renewal()), at: t0 + 2 * minute))
        #expect(try await state(ledger, at: t0 + 3 * minute)?.state == .revoked)
        // The refund reversed: granted again, to the same user.
        #expect(try await ledger.notify(try await notification("REFUND_REVERSED", signed: t0 + 3 * minute, transaction: transaction(0), renewal: renewal()), at: t0 + 3 * minute))
        #expect(try await state(ledger, at: t0 + 4 * minute)?.state == .active)
        let granted = try await ledger.events().filter { $0.topic == "transaction.granted" }
        #expect(granted.map(\.userID) == ["u-1", "u-1"])
        // Family sharing ended: REVOKE carries the revocation.
        #expect(try await ledger.notify(try await notification("REVOKE", signed: t0 + 4 * minute, transaction: transaction(0, revoked: t0 + 4 * minute), renewal: renewal()), at: t0 + 4 * minute))
        #expect(try await state(ledger, at: t0 + 4 * minute + 1)?.state == .revoked)
    }

    @Test func anExtendedRenewalDateAndAConsumptionRequest() async throws {
        let ledger = try await subscribed()
        let extra = 3 * 24 * 60 * minute
        #expect(try await ledger.notify(try await notification("RENEWAL_EXTENDED", signed: t0 + 2 * minute, transaction: transaction(0, expiresExtra: extra), renewal: renewal()), at: t0 + 2 * minute))
        #expect(try await state(ledger, at: t0 + 60 * minute)?.expiresDateMs == t0 + 5 * minute + extra)
        let head = try await ledger.headSeq()
        let before = try await ledger.subscription(Self.otid)
        #expect(try await ledger.notify(try await notification("CONSUMPTION_REQUEST", signed: t0 + 3 * minute, transaction: transaction(0), renewal: renewal()), at: t0 + 3 * minute))
        #expect(try await ledger.headSeq() == head)
        #expect(try await ledger.subscription(Self.otid)?.expiresDateMs == before?.expiresDateMs)
    }

    static let allTypes = [
        "SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "DID_FAIL_TO_RENEW",
        "GRACE_PERIOD_EXPIRED", "EXPIRED", "OFFER_REDEEMED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED",
        "REFUND_REVERSED", "REVOKE", "RENEWAL_EXTENDED", "CONSUMPTION_REQUEST",
    ]

    @Test("a notificationUUID applies once, whatever the type", arguments: allTypes)
    func aRedeliveryChangesNothing(_ type: String) async throws {
        let ledger = try await subscribed()
        let uuid = UUID().uuidString
        let delivered = try await notification(type, uuid: uuid, signed: t0 + 5 * minute, transaction: transaction(1), renewal: renewal(autoRenew: 0))
        #expect(try await ledger.notify(delivered, at: t0 + 5 * minute))
        let head = try await ledger.headSeq()
        let state = try await ledger.subscription(Self.otid)
        // Apple signs each delivery anew: the same UUID, a new signature and signedDate.
        let again = try await notification(type, uuid: uuid, signed: t0 + 6 * minute, transaction: transaction(1), renewal: renewal(autoRenew: 1))
        #expect(try await ledger.notify(again, at: t0 + 6 * minute) == false)
        #expect(try await ledger.headSeq() == head)
        #expect(try await ledger.subscription(Self.otid) == state)
    }
}
