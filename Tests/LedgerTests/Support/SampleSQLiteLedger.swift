import Contracts
import Foundation

@testable import Ledger

/// An SQLite ledger on disk written by the real rules, with rows in every
/// table `storekeeper db import` moves: subscriptions with renewal info,
/// one-off purchases, an answer kept for an Idempotency-Key, notifications
/// (consumption information queued for one), a catch-up cursor,
/// a purchase moved to another user (policy transfer), text keys whose byte
/// order differs from dictionary order, and events of which the oldest were
/// pruned (the retained seqs do not start at 1).
struct SampleSQLiteLedger {
    static let catalog = EntitlementKindTests.catalog
    static let users = ["u-0", "u-1", "u-2", "u-3", "Ü-4", "nobody"]
    static let purchases = ["0001", "1000", "5000", "5001", "2000", "a-7", "B7", "é7"].map { SubscriptionKey(.sandbox, $0) }
    static let idempotencyKey = IdempotencyRuleTests.key()
    /// When the sample's reads are compared: after every write.
    static let now = Make.t0 + 12 * Make.minute

    /// The directory holding `ledger.sqlite` (removed by `remove()`).
    let directory: String
    let ledger: LedgerFixture

    var file: String { URL(fileURLWithPath: directory).appendingPathComponent(SQLiteLedgerStore.fileName).path }

    static func make() async throws -> SampleSQLiteLedger {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("storekeeper-import-\(UUID().uuidString)").path
        let store = try SQLiteLedgerStore.open(directory: directory)
        let ledger = try await LedgerFixture(
            .sqlite, policy: .transfer, store: store, catalog: catalog, sendsConsumptionInfo: true)
        let t0 = Make.t0
        // Its events are pruned at the end.
        _ = try await ledger.record(
            "u-0", Make.result([Make.transaction("0001", product: "com.example.coins100", purchased: t0)]), at: t0)
        let subscription = Make.result(Make.renewals("1000", count: 3), pending: [Make.pending("1000")])
        _ = try await ledger.apply(.record(IdempotencyRuleTests.request("u-1", subscription, key: idempotencyKey)), at: t0 + 1_000)
        // One signed with its price (StoreKit 2).
        var priced = EntitlementKindTests.oneOff("5001", product: "com.example.coins100", purchased: t0)
        priced.priceMilliunits = 1_990
        priced.currency = "AUD"
        _ = try await ledger.record(
            "u-1",
            Make.result([
                EntitlementKindTests.oneOff("5000", product: "com.example.removeads", purchased: t0, kind: .nonConsumable),
                priced,
            ]), at: t0 + 2_000)
        _ = try await ledger.record("u-2", Make.result(Make.renewals("2000", count: 2)), at: t0 + 3_000)
        let renewal = Make.notification(
            "DID_RENEW", id: "n-1", otid: "1000", transactions: Make.renewals("1000", count: 4), signed: t0 + 4_000)
        _ = try await ledger.notify(renewal, at: t0 + 4_000)
        // u-3 restores u-2's purchase: it moves to u-3.
        _ = try await ledger.record("u-3", Make.result(Make.renewals("2000", count: 2)), at: t0 + 5_000)
        _ = try await ledger.record(
            "Ü-4",
            Make.result(["a-7", "B7", "é7"].map { Make.transaction($0, product: "com.example.coins100", purchased: t0) }),
            at: t0 + 6_000)
        // A refund request of u-0's coins (consumption information queued) and a catch-up span applied.
        var refundRequest = Make.notification(
            "CONSUMPTION_REQUEST", id: "n-2", otid: "0001",
            transactions: [Make.transaction("0001", product: "com.example.coins100", purchased: t0)], signed: t0 + 6_500)
        refundRequest.version = .v2
        _ = try await ledger.notify(refundRequest, at: t0 + 6_500)
        _ = try await ledger.apply(.claimCatchUp(.production, holder: "sample", leaseMs: 60_000), at: t0 + 6_600)
        _ = try await ledger.apply(.releaseCatchUp(.production, holder: "sample", appliedUntil: t0 + 6_600), at: t0 + 6_600)
        _ = try await ledger.apply(.pruneEvents(before: t0 + 500), at: t0 + 7_000)
        return SampleSQLiteLedger(directory: directory, ledger: ledger)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
