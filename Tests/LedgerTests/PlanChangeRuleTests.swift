import AppleFormats
import Contracts
import Foundation
import StorekeeperCore
import Testing

@testable import Gateway
@testable import Ledger

/// Upgrades, downgrades and crossgrades on every path: receipts (with
/// `is_upgraded`, with or without `cancellation_date`, or without any flag),
/// signed transactions, version 1 notifications; real Apple payloads where
/// they exist.
@Suite("Plan changes on every path")
struct PlanChangeRuleTests {
    let t0 = Make.t0
    let minute = Make.minute

    static func fixture(_ relative: String) throws -> Data {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(relative)
        return try Data(contentsOf: url)
    }

    static func planChanges(_ ledger: LedgerFixture) async throws -> [String] {
        try await ledger.events().compactMap { event in
            guard event.topic == "subscription.changed", !event.subscriptionChanged.change.isEmpty else { return nil }
            let c = event.subscriptionChanged
            return "\(c.change) \(c.fromProductID)->\(c.toProductID)@\(c.effectiveDateMs)"
        }
    }

    // MARK: Real payloads

    /// RevenueCat's real sandbox receipt: one purchase moves from a monthly to an annual product.
    @Test func theRealUpgradePairEndsOnTheAnnualProduct() async throws {
        let ledger = try await LedgerFixture()
        let response = try AppleResponse(
            body: Array(try Self.fixture("AppleFormatsTests/Fixtures/verifyreceipt/status0-sandbox-upgrade-pair-revenuecat.json")))
        let result = ReceiptNormalizer.normalize(response, environment: .sandbox, receiptSHA256: "test")
        let outcome = try await ledger.record("u-1", result, at: 1_595_440_486_402)
        let entitlement = try #require(outcome.entitlements.first { $0.originalTransactionID == "1000000692878476" })
        #expect(entitlement.productID == "com.revenuecat.annual_39.99.2_week_intro")
        #expect(entitlement.expiresDateMs == 1_595_443_146_000)
        #expect(entitlement.autoRenewProductID == "com.revenuecat.annual_39.99.2_week_intro")
    }

    /// A real version 1 notification (twigano, 2020) whose receipt holds four
    /// yearly transactions `is_upgraded` without a cancellation date, each
    /// followed minutes later by the monthly product it was upgraded to.
    @Test(arguments: StoreKind.allCases)
    func aRealV1NotificationsUpgradedYearsGiveNoAccessBeyondTheirUpgrade(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let bytes = Array(try Self.fixture("GatewayTests/Fixtures/did-change-renewal-status-sandbox-2020.json"))
        guard case .version1(let parsed) = try NotificationBody.read(bytes) else { throw LedgerFixture.Unexpected() }
        let notification = try NotificationV1Decoder.decode(
            parsed, bytes: bytes, sharedSecret: Secret("********"), bundleIDs: [], receivedAt: 1_606_293_002_000)
        #expect(notification.transactions.filter(\.isUpgraded).count == 4)
        #expect(try await ledger.notify(notification, at: 1_606_293_002_000))
        let s = try #require(try await ledger.subscription("1000000723811158", .sandbox))
        #expect(s.productID == "month_premium")
        #expect(s.expiresDateMs == 1_606_293_062_000)

        // The first upgrade alone, as a receipt asked in between: the yearly
        // period (to 1603925005000) ends when the monthly one is bought.
        let entries = notification.transactions.filter { ["1000000739325323", "1000000739325329"].contains($0.transactionID) }
        #expect(entries.count == 2)
        let other = try await LedgerFixture(store)
        let outcome = try await other.record("u-1", Make.result(entries), at: 1_603_921_600_000)
        #expect(outcome.entitlements.first?.productID == "month_premium")
        #expect(outcome.entitlements.first?.expiresDateMs == 1_603_921_879_000)
    }

    /// The same pair with the flag taken away (as when the upgrade is learned
    /// only from the newer transaction): Apple's purchase dates alone end the year.
    @Test func withoutIsUpgradedTheNewerTransactionStillEndsTheOldPeriod() async throws {
        let bytes = Array(try Self.fixture("GatewayTests/Fixtures/did-change-renewal-status-sandbox-2020.json"))
        guard case .version1(let parsed) = try NotificationBody.read(bytes) else { throw LedgerFixture.Unexpected() }
        let notification = try NotificationV1Decoder.decode(
            parsed, bytes: bytes, sharedSecret: Secret("********"), bundleIDs: [], receivedAt: 1_606_293_002_000)
        let entries = notification.transactions.filter { ["1000000739325323", "1000000739325329"].contains($0.transactionID) }
            .map { entry in
                var unflagged = entry
                unflagged.isUpgraded = false
                return unflagged
            }
        let ledger = try await LedgerFixture()
        let outcome = try await ledger.record("u-1", Make.result(entries), at: 1_603_921_600_000)
        #expect(outcome.entitlements.first?.productID == "month_premium")
        #expect(outcome.entitlements.first?.expiresDateMs == 1_603_921_879_000)
    }

    // MARK: Upgrades

    /// StoreKit 2: only the new transaction says anything, in either order.
    @Test(arguments: [false, true])
    func signedTransactionsAloneApplyAnUpgradeAtOnceInEitherOrder(_ newFirst: Bool) async throws {
        let ledger = try await LedgerFixture()
        let yearly = Make.transaction("1000", product: "pro.yearly", purchased: t0, expires: t0 + 60 * minute)
        let monthly = Make.transaction("1001", otid: "1000", product: "premium.monthly", purchased: t0 + 20 * minute,
                                       expires: t0 + 25 * minute)
        for transaction in newFirst ? [monthly, yearly] : [yearly, monthly] {
            _ = try await ledger.record("u-1", Make.result([transaction]), at: t0 + 21 * minute)
        }
        let after = try #require(try await ledger.entitlements("u-1", at: t0 + 30 * minute).first)
        #expect(after.productID == "premium.monthly")
        #expect(after.expiresDateMs == t0 + 25 * minute)
        #expect(after.state == .expired, "the yearly period was refunded at the upgrade: no access after the monthly one")
        #expect(try await Self.planChanges(ledger) == (newFirst ? [] : ["upgrade pro.yearly->premium.monthly@\(t0 + 20 * minute)"]))
    }

    /// `is_upgraded` with Apple's `cancellation_date` (the upgrade's time) in a receipt.
    @Test(arguments: StoreKind.allCases) func anUpgradedTransactionsCancellationDateEndsIt(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let yearly = Make.transaction(
            "1000", product: "pro.yearly", purchased: t0, expires: t0 + 60 * minute, cancelled: t0 + 20 * minute, upgraded: true)
        let outcome = try await ledger.record("u-1", Make.result([yearly]), at: t0 + 21 * minute)
        #expect(outcome.revoked.isEmpty, "an upgrade is not a refund")
        #expect(outcome.entitlements.first?.expiresDateMs == t0 + 20 * minute)
    }

    @Test func refundingTheReplacedTransactionKeepsTheUpgradeAndRefundingTheUpgradeRevokes() async throws {
        let ledger = try await LedgerFixture()
        let yearly = Make.transaction("1000", product: "pro.yearly", purchased: t0, expires: t0 + 60 * minute)
        let monthly = Make.transaction("1001", otid: "1000", product: "premium.monthly", purchased: t0 + 20 * minute,
                                       expires: t0 + 25 * minute)
        _ = try await ledger.record("u-1", Make.result([yearly, monthly]), at: t0 + 21 * minute)
        var refundedYear = yearly
        refundedYear.cancellationDateMs = t0 + 22 * minute
        let kept = try await ledger.record("u-1", Make.result([refundedYear, monthly]), at: t0 + 22 * minute)
        #expect(kept.entitlements.first?.state == .active)
        #expect(kept.entitlements.first?.productID == "premium.monthly")
        var refundedMonth = monthly
        refundedMonth.cancellationDateMs = t0 + 23 * minute
        let revoked = try await ledger.record("u-1", Make.result([refundedYear, refundedMonth]), at: t0 + 23 * minute)
        // The year does not come back: it ended at the upgrade.
        #expect(revoked.entitlements.first?.state == .revoked)
    }

    // MARK: Downgrades and crossgrades

    @Test(arguments: StoreKind.allCases)
    func aDowngradeQueuesForTheRenewalAndThenTheRenewalBringsIt(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let yearly = Make.transaction("1000", product: "pro.yearly", purchased: t0, expires: t0 + 60 * minute)
        _ = try await ledger.record("u-1", Make.result([yearly], pending: [Make.pending("1000", product: "pro.yearly")],
                                                       requestDate: t0 + minute), at: t0 + minute)
        var queued = Make.pending("1000", product: "pro.yearly")
        queued.autoRenewProductID = "pro.monthly"
        let during = try await ledger.record(
            "u-1", Make.result([yearly], pending: [queued], requestDate: t0 + 10 * minute), at: t0 + 10 * minute)
        let entitlement = try #require(during.entitlements.first)
        #expect(entitlement.productID == "pro.yearly" && entitlement.expiresDateMs == t0 + 60 * minute)
        #expect(entitlement.autoRenewProductID == "pro.monthly")

        let renewal = Make.transaction("1001", otid: "1000", product: "pro.monthly", purchased: t0 + 60 * minute,
                                       expires: t0 + 65 * minute)
        let before = try await ledger.headSeq()
        let after = try await ledger.record(
            "u-1", Make.result([yearly, renewal], pending: [Make.pending("1000", product: "pro.monthly")],
                               requestDate: t0 + 61 * minute), at: t0 + 61 * minute)
        #expect(after.entitlements.first?.productID == "pro.monthly")
        #expect(after.entitlements.first?.expiresDateMs == t0 + 65 * minute)
        #expect(try await ledger.topics(after: before).contains("subscription.renewed"), "the queued change applies as a renewal")
        #expect(try await Self.planChanges(ledger) == ["downgrade_queued pro.yearly->pro.monthly@\(t0 + 60 * minute)"])
    }

    @Test func theCatalogsLevelsNameCrossgradesAtOnceAndQueued() async throws {
        let catalog = ProductCatalog(products: [
            "pro.monthly": .init(kind: .autoRenewable, duration: ISODuration("P1M"), access: ["pro"], group: "pro", level: 2),
            "pro.monthly.b": .init(kind: .autoRenewable, duration: ISODuration("P1M"), access: ["pro"], group: "pro", level: 2),
            "pro.yearly": .init(kind: .autoRenewable, duration: ISODuration("P1Y"), access: ["pro", "archive"], group: "pro", level: 2),
        ])
        let ledger = try await LedgerFixture(catalog: catalog)
        let first = Make.transaction("1000", product: "pro.monthly", purchased: t0, expires: t0 + 5 * minute)
        _ = try await ledger.record("u-1", Make.result([first], pending: [Make.pending("1000", product: "pro.monthly")],
                                                       requestDate: t0), at: t0)
        // Same duration: at once.
        let same = Make.transaction("1001", otid: "1000", product: "pro.monthly.b", purchased: t0 + minute,
                                    expires: t0 + 6 * minute)
        _ = try await ledger.record("u-1", Make.result([first, same], pending: [Make.pending("1000", product: "pro.monthly.b")],
                                                       requestDate: t0 + minute), at: t0 + minute)
        // Another duration: at the renewal.
        var queued = Make.pending("1000", product: "pro.monthly.b")
        queued.autoRenewProductID = "pro.yearly"
        let outcome = try await ledger.record(
            "u-1", Make.result([first, same], pending: [queued], requestDate: t0 + 2 * minute), at: t0 + 2 * minute)
        #expect(outcome.entitlements.first?.productID == "pro.monthly.b")
        #expect(outcome.entitlements.first?.autoRenewAccess == ["pro", "archive"])
        #expect(try await Self.planChanges(ledger) == [
            "crossgrade pro.monthly->pro.monthly.b@\(t0 + minute)", "crossgrade pro.monthly.b->pro.yearly@\(t0 + 6 * minute)",
        ])
    }
}
