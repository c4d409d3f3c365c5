import AppleJWS
import Contracts
import Foundation
import Testing

@testable import Ledger
@testable import Verifier

/// What a transaction learns after it was first stored: an expiry, an
/// upgrade, a reversed refund. Shapes from Apple's payloads (fixtures and
/// version 2 claims as NotificationV2Tests signs them).
@Suite("Transactions that learn more later")
struct TransactionDefectTests {
    let t0 = Make.t0
    let minute = Make.minute

    @Test("Defect 6: a transaction first stored without an expiry gains it, and its subscription appears", arguments: StoreKind.allCases)
    func aLaterExpiryIsStored(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        // Apple's in_app entry of the fixture's first renewal, first seen without its expiry
        // (a notification's transaction, or an iOS 6 style receipt).
        let bare = Make.transaction("1000000692878476", product: "com.revenuecat.monthly_4.99.1_week_intro", purchased: t0)
        _ = try await ledger.record("u-1", Make.result([bare]), at: t0)
        #expect(try await ledger.entitlements("u-1", at: t0 + 1).isEmpty)
        var dated = bare
        dated.expiresDateMs = t0 + 5 * minute
        _ = try await ledger.record("u-1", Make.result([dated], pending: [Make.pending("1000000692878476")]), at: t0 + 1_000)
        let entitlement = try #require(try await ledger.entitlements("u-1", at: t0 + minute).first)
        #expect(entitlement.expiresDateMs == t0 + 5 * minute)
        #expect(entitlement.state == .active)
    }

    @Test("Defect 7: is_upgraded learned later without a cancellation date ends the upgraded-from transaction at the upgrade", arguments: StoreKind.allCases)
    func aLaterUpgradeIsStored(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let year: Int64 = 365 * 24 * 60 * minute
        let annual = Make.transaction("1000000696553650", otid: "1000000692878476", product: "com.revenuecat.annual_39.99.2_week_intro",
            purchased: t0, expires: t0 + year)
        _ = try await ledger.record("u-1", Make.result([annual]), at: t0)
        // A month later the user upgrades to a premium monthly plan: Apple marks the annual one upgraded.
        let upgradedAt = t0 + 30 * 24 * 60 * minute
        var replaced = annual
        replaced.isUpgraded = true
        let monthly = Make.transaction("1000000700000001", otid: "1000000692878476", product: "com.revenuecat.premium.monthly",
            purchased: upgradedAt, expires: upgradedAt + 30 * 24 * 60 * minute)
        _ = try await ledger.record("u-1", Make.result([replaced, monthly]), at: upgradedAt + 1_000)
        let stored = try await ledger.store.read { try $0.transaction(TransactionKey(.sandbox, "1000000696553650")) }
        #expect(stored?.isUpgraded == true)
        #expect(stored?.isRevoked == false, "an upgrade is not a refund")
        let subscription = try #require(try await ledger.subscription("1000000692878476"))
        #expect(subscription.productID == "com.revenuecat.premium.monthly")
        #expect(subscription.expiresDateMs == upgradedAt + 30 * 24 * 60 * minute)
    }

    // MARK: Defect 10, with version 2 notifications as Apple signs them.

    static let v2 = NotificationV2Tests()

    func refund(uuid: String, signed: Int64, revoked: Int64) async throws -> NotificationApply {
        try await Self.v2.notification("REFUND", uuid: uuid, signed: signed, transaction: Self.v2.transaction(0, revoked: revoked))
    }

    func reversal(uuid: String, signed: Int64) async throws -> NotificationApply {
        try await Self.v2.notification("REFUND_REVERSED", uuid: uuid, signed: signed, transaction: Self.v2.transaction(0))
    }

    func isRevoked(_ ledger: LedgerFixture) async throws -> Bool {
        try await ledger.store.read { try $0.transaction(TransactionKey(.sandbox, NotificationV2Tests.otid)) }?.isRevoked ?? false
    }

    @Test("Defect 10: the reversed refund delivered again under a new UUID does not revoke again")
    func aReversedRefundUnderANewUUIDIsStale() async throws {
        let ledger = try await Self.v2.subscribed()
        #expect(try await ledger.notify(try await refund(uuid: "r-1", signed: t0 + 2 * minute, revoked: t0 + 2 * minute), at: t0 + 2 * minute))
        #expect(try await isRevoked(ledger))
        #expect(try await ledger.notify(try await reversal(uuid: "rr-1", signed: t0 + 3 * minute), at: t0 + 3 * minute))
        #expect(try await !isRevoked(ledger))
        #expect(try await ledger.notify(try await refund(uuid: "r-2", signed: t0 + 2 * minute, revoked: t0 + 2 * minute), at: t0 + 4 * minute))
        #expect(try await !isRevoked(ledger), "Apple reversed this refund later than it made it")
        // A refund Apple makes after the reversal still counts.
        #expect(try await ledger.notify(try await refund(uuid: "r-3", signed: t0 + 4 * minute, revoked: t0 + 4 * minute), at: t0 + 5 * minute))
        #expect(try await isRevoked(ledger))
    }

    @Test("Defect 10: a reversal that arrives before its refund wins all the same")
    func aReversalBeforeItsRefund() async throws {
        let ledger = try await Self.v2.subscribed()
        #expect(try await ledger.notify(try await reversal(uuid: "rr-1", signed: t0 + 3 * minute), at: t0 + 3 * minute))
        #expect(try await ledger.notify(try await refund(uuid: "r-1", signed: t0 + 2 * minute, revoked: t0 + 2 * minute), at: t0 + 4 * minute))
        #expect(try await !isRevoked(ledger))
        #expect(try await ledger.entitlements("u-1", at: t0 + minute).first?.state == .active)
    }
}
