import AppleJWS
import Contracts
import Foundation
import Testing

@testable import Simulator

/// The simulator's plan changes, as the App Store applies and reports them:
/// at once or at the next renewal, in receipts, signed transactions and both
/// versions of notifications.
@Suite struct SimPlanChangeTests {
    let t0: Int64 = 1_700_000_000_000
    let minute: Int64 = 60_000
    let trusting = SignedDataVerifier(
        trustedRoots: try! SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM]))

    func simulator() -> AppStoreSimulator {
        let start = t0
        return AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: "s", wallClock: { start })
    }

    func buy(_ simulator: AppStoreSimulator, _ product: String = "pro.yearly", period: SimPeriod = .year, level: Int? = 2)
        throws -> SimStore.Purchase
    {
        try simulator.purchase(
            PurchaseRequest(
                account: "a", productID: product, type: .autoRenewable, environment: .sandbox, period: period, level: level))
    }

    func change(
        _ simulator: AppStoreSimulator, _ otid: String, to product: String, _ kind: SimPlanChange, period: SimPeriod? = nil,
        level: Int? = nil
    ) throws -> (notification: SimNotification, transactionID: String?) {
        try simulator.changePlan(
            PlanChangeRequest(originalTransactionID: otid, productID: product, kind: kind, period: period, level: level))
    }

    /// The account's verifyReceipt answer now.
    func receipt(_ simulator: AppStoreSimulator, _ token: String) throws -> [String: Any] {
        let body = try JSONSerialization.data(withJSONObject: ["receipt-data": token, "password": "s"])
        let json = simulator.verify(Array(body), at: .sandbox).json
        return try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    }

    func claims(_ jws: String) async throws -> [String: Any] {
        let payload = try await trusting.verify(jws)
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    @Test func anUpgradeStartsTheNewProductNowAndMarksTheOldTransactionUpgraded() async throws {
        let simulator = simulator()
        let bought = try buy(simulator)
        _ = simulator.advanceClock(byMilliseconds: 10 * minute)
        let made = try change(simulator, bought.originalTransactionID, to: "premium.monthly", .upgrade, period: .month, level: 1)
        let newID = try #require(made.transactionID)
        #expect(made.notification.type == "DID_CHANGE_RENEWAL_PREF" && made.notification.subtype == "UPGRADE")
        #expect(made.notification.version1Type == "INTERACTIVE_RENEWAL", "Apple's version 1 type for an upgrade")

        let answer = try receipt(simulator, bought.receiptData)
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        let old = try #require(latest.first { $0["transaction_id"] as? String == bought.transactionID })
        let new = try #require(latest.first { $0["transaction_id"] as? String == newID })
        #expect(old["is_upgraded"] as? String == "true")
        #expect(new["is_upgraded"] == nil)
        #expect(new["product_id"] as? String == "premium.monthly")
        #expect(new["purchase_date_ms"] as? String == String(t0 + 10 * minute))
        #expect(new["expires_date_ms"] as? String == String(t0 + 15 * minute))
        #expect(new["original_transaction_id"] as? String == bought.originalTransactionID)
        let pending = try #require((answer["pending_renewal_info"] as? [[String: Any]])?.first)
        #expect(pending["auto_renew_product_id"] as? String == "premium.monthly")

        let oldSigned = try await claims(try #require(simulator.signedTransaction(bought.transactionID)))
        #expect(oldSigned["isUpgraded"] as? Bool == true)
        #expect(oldSigned["revocationDate"] == nil, "an upgrade is not a refund")
        let newSigned = try await claims(try #require(simulator.signedTransaction(newID)))
        #expect(newSigned["transactionReason"] as? String == "PURCHASE")

        // Version 2: the new transaction and the renewal info; version 1: INTERACTIVE_RENEWAL.
        let record = try #require(simulator.record(made.notification))
        #expect(record.subtype == "UPGRADE")
        let transactionClaims = try #require(record.transactionClaims)
        let v2Transaction = try #require(try JSONSerialization.jsonObject(with: transactionClaims) as? [String: Any])
        #expect(v2Transaction["transactionId"] as? String == newID)
        let v1 = try #require(simulator.notificationBody(made.notification, password: "s"))
        let v1Body = try #require(try JSONSerialization.jsonObject(with: v1) as? [String: Any])
        #expect(v1Body["notification_type"] as? String == "INTERACTIVE_RENEWAL")
        #expect(v1Body["auto_renew_product_id"] as? String == "premium.monthly")
    }

    @Test func aDowngradeWaitsForTheRenewalAndCanBeCancelled() throws {
        let simulator = simulator()
        let bought = try buy(simulator, "premium.monthly", period: .month, level: 1)
        let queued = try change(simulator, bought.originalTransactionID, to: "pro.yearly", .downgrade, period: .year, level: 2)
        #expect(queued.transactionID == nil)
        #expect(queued.notification.subtype == "DOWNGRADE" && queued.notification.version1Type == nil)
        var answer = try receipt(simulator, bought.receiptData)
        #expect((answer["latest_receipt_info"] as? [[String: Any]])?.count == 1, "nothing changes before the renewal")
        #expect((answer["pending_renewal_info"] as? [[String: Any]])?.first?["auto_renew_product_id"] as? String == "pro.yearly")
        #expect((answer["pending_renewal_info"] as? [[String: Any]])?.first?["product_id"] as? String == "premium.monthly")

        // The current product again: the queued change is cancelled (no subtype).
        let cancelled = try change(simulator, bought.originalTransactionID, to: "premium.monthly", .downgrade)
        #expect(cancelled.notification.subtype == nil && cancelled.notification.type == "DID_CHANGE_RENEWAL_PREF")
        #expect(throws: SimStore.Failure.notChangeable) {
            try change(simulator, bought.originalTransactionID, to: "premium.monthly", .downgrade)
        }

        _ = try change(simulator, bought.originalTransactionID, to: "pro.yearly", .downgrade, period: .year)
        let renewed = try simulator.renewNow(originalTransactionID: bought.originalTransactionID)
        #expect(renewed.expiresMs == t0 + 5 * minute + 60 * minute, "the renewal is a sandbox year of the new product")
        answer = try receipt(simulator, bought.receiptData)
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        #expect(latest.last?["product_id"] as? String == "pro.yearly")
        #expect(latest.last?["purchase_date_ms"] as? String == String(t0 + 5 * minute))
        #expect(latest.contains { $0["is_upgraded"] != nil } == false)
    }

    @Test func aCrossgradeIsAtOnceOnlyForTheSamePeriod() throws {
        let simulator = simulator()
        let bought = try buy(simulator, "pro.monthly", period: .month, level: 2)
        let atOnce = try change(simulator, bought.originalTransactionID, to: "pro.monthly.b", .crossgrade, level: 2)
        #expect(atOnce.notification.subtype == "UPGRADE", "Apple's subtype for a crossgrade of the same period")
        #expect(atOnce.transactionID != nil)
        let queued = try change(simulator, bought.originalTransactionID, to: "pro.yearly", .crossgrade, period: .year, level: 2)
        #expect(queued.notification.subtype == "DOWNGRADE", "Apple's subtype for a crossgrade of another period")
        #expect(queued.transactionID == nil)
    }

    @Test func levelsThatContradictTheKindAreRefused() throws {
        let simulator = simulator()
        let bought = try buy(simulator, "pro.monthly", period: .month, level: 2)
        #expect(throws: SimStore.Failure.levelMismatch) {
            try change(simulator, bought.originalTransactionID, to: "basic.monthly", .upgrade, level: 3)
        }
        #expect(throws: SimStore.Failure.levelMismatch) {
            try change(simulator, bought.originalTransactionID, to: "premium.monthly", .downgrade, level: 1)
        }
        #expect(throws: SimStore.Failure.unknownSubscription) { try change(simulator, "nope", to: "x", .upgrade) }
        _ = simulator.advanceClock(byMilliseconds: 6 * minute)
        _ = try simulator.setAutoRenew(originalTransactionID: bought.originalTransactionID, enabled: false)
        _ = simulator.advanceClock(byMilliseconds: 6 * minute)
        #expect(throws: SimStore.Failure.notChangeable, "an expired subscription is bought again, not changed") {
            try change(simulator, bought.originalTransactionID, to: "premium.monthly", .upgrade)
        }
    }
}
