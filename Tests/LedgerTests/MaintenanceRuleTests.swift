import Contracts
import Testing

@testable import Ledger

@Suite("Expiry sweep and refresh")
struct MaintenanceRuleTests {
    let t0 = Make.t0
    let minute = Make.minute

    @Test(arguments: StoreKind.allCases) func anExpiredSubscriptionGetsOneExpiredEventPerExpiry(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await ledger.record(
            "u-1", Make.result(Make.renewals("1000", count: 1), pending: [Make.pending("1000", autoRenew: false, intent: 1)]),
            at: t0)
        guard case .count(let none) = try await ledger.apply(.sweepExpired(limit: 10), at: t0 + 4 * minute) else { return }
        #expect(none == 0)
        guard case .count(let one) = try await ledger.apply(.sweepExpired(limit: 10), at: t0 + 6 * minute) else { return }
        #expect(one == 1)
        guard case .count(let again) = try await ledger.apply(.sweepExpired(limit: 10), at: t0 + 7 * minute) else { return }
        #expect(again == 0)
        let expired = try await ledger.events().filter { $0.topic == "subscription.expired" }
        #expect(expired.count == 1)
        #expect(expired.first?.userID == "u-1")
        #expect(expired.first?.subscriptionExpired.expiresDateMs == t0 + 5 * minute)
        #expect(expired.first?.subscriptionExpired.expirationIntent == 1)
        // A renewal then a new lapse: a new expired event.
        _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 2)), at: t0 + 8 * minute)
        guard case .count(let second) = try await ledger.apply(.sweepExpired(limit: 10), at: t0 + 11 * minute) else { return }
        #expect(second == 1)
    }

    @Test(arguments: StoreKind.allCases) func graceDelaysTheExpiredEvent(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await ledger.record(
            "u-1",
            Make.result(Make.renewals("1000", count: 1), pending: [Make.pending("1000", billingRetry: true, grace: t0 + 9 * minute)]),
            at: t0)
        guard case .count(let inGrace) = try await ledger.apply(.sweepExpired(limit: 10), at: t0 + 6 * minute) else { return }
        #expect(inGrace == 0)
        guard case .count(let after) = try await ledger.apply(.sweepExpired(limit: 10), at: t0 + 10 * minute) else { return }
        #expect(after == 1)
    }

    @Test(arguments: StoreKind.allCases) func lapsedAutoRenewingSubscriptionsAreClaimedWithBackoff(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 1), pending: [Make.pending("1000")]), at: t0)
        _ = try await ledger.record(
            "u-2", Make.result(Make.renewals("2000", count: 1), pending: [Make.pending("2000", autoRenew: false)]), at: t0)
        guard case .claimed(let early) = try await ledger.apply(.claimRefreshes(limit: 10), at: t0 + 4 * minute) else { return }
        #expect(early.isEmpty, "not expired yet")
        guard case .claimed(let due) = try await ledger.apply(.claimRefreshes(limit: 10), at: t0 + 6 * minute) else { return }
        #expect(due.map(\.subscription.key.originalTransactionID) == ["1000"], "auto-renew off is never refreshed")
        #expect(due.first?.owner == "u-1")
        #expect(due.first?.subscription.latestReceipt == "bGF0ZXN0")
        guard case .claimed(let backedOff) = try await ledger.apply(.claimRefreshes(limit: 10), at: t0 + 6 * minute + 30_000)
        else { return }
        #expect(backedOff.isEmpty, "the next attempt waits a minute")
        guard case .claimed(let retried) = try await ledger.apply(.claimRefreshes(limit: 10), at: t0 + 7 * minute + 1)
        else { return }
        #expect(retried.count == 1)
        #expect(retried.first?.subscription.refreshAttempts == 2)
        #expect(MaintenanceRules.refreshBackoffMs(attempt: 3) == 4 * minute)
        #expect(MaintenanceRules.refreshBackoffMs(attempt: 40) == 24 * 60 * minute)
    }

    @Test(arguments: StoreKind.allCases) func aRefreshResultCreditsTheOwnerAndRenews(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 1), pending: [Make.pending("1000")]), at: t0)
        _ = try await ledger.apply(.claimRefreshes(limit: 10), at: t0 + 6 * minute)
        let head = try await ledger.headSeq()
        _ = try await ledger.apply(
            .refreshResult(Make.result(Make.renewals("1000", count: 2), pending: [Make.pending("1000")]), owner: "u-1"),
            at: t0 + 6 * minute)
        let events = try await ledger.events(after: head)
        #expect(events.map(\.topic) == ["transaction.granted", "subscription.renewed"])
        #expect(events.first?.userID == "u-1")
        let subscription = try await ledger.subscription("1000")
        #expect(subscription?.expiresDateMs == t0 + 10 * minute)
        #expect(subscription?.refreshAttempts == 0)
        #expect(subscription?.nextRefreshAtMs == nil)
    }
}
