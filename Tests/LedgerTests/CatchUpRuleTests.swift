import Contracts
import Foundation
import Testing

@testable import Ledger

/// The notification catch-up's cursor and lease, on both stores, and the span
/// each run asks Apple for (pure, no clock).
@Suite("Notification catch-up: cursor, lease and span")
struct CatchUpRuleTests {
    let t0 = Make.t0
    let minute = Make.minute

    func claim(_ ledger: LedgerFixture, _ holder: String, at now: Int64, environment: AppleEnvironment = .production)
        async throws -> CatchUpClaim?
    {
        guard case .catchUp(let claim) = try await ledger.apply(.claimCatchUp(environment, holder: holder, leaseMs: 5 * minute), at: now)
        else { throw LedgerFixture.Unexpected() }
        return claim
    }

    func release(
        _ ledger: LedgerFixture, _ holder: String, until: Int64?, at now: Int64, environment: AppleEnvironment = .production
    ) async throws {
        _ = try await ledger.apply(.releaseCatchUp(environment, holder: holder, appliedUntil: until), at: now)
    }

    @Test(arguments: StoreKind.allCases) func oneLedgerAtATimeHoldsTheLeaseAndTheCursorOnlyMovesOn(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let first = try await claim(ledger, "a", at: t0)
        #expect(first == CatchUpClaim(appliedUntilMs: nil), "never caught up")
        #expect(try await claim(ledger, "b", at: t0 + minute) == nil, "a holds the lease")
        #expect(try await claim(ledger, "a", at: t0 + minute) != nil, "its holder may claim again")
        try await release(ledger, "a", until: t0 + minute, at: t0 + minute)
        #expect(try await claim(ledger, "b", at: t0 + 2 * minute) == CatchUpClaim(appliedUntilMs: t0 + minute))
        // b dies holding it; after the lease, a takes over from where b's cursor stood.
        #expect(try await claim(ledger, "a", at: t0 + 6 * minute) == nil)
        #expect(try await claim(ledger, "a", at: t0 + 7 * minute + 1) == CatchUpClaim(appliedUntilMs: t0 + minute))
        // b, late, releases: the cursor moves, a's lease stays.
        try await release(ledger, "b", until: t0 + 3 * minute, at: t0 + 8 * minute)
        #expect(try await claim(ledger, "c", at: t0 + 8 * minute) == nil)
        // Never back.
        try await release(ledger, "a", until: t0, at: t0 + 9 * minute)
        #expect(try await claim(ledger, "c", at: t0 + 9 * minute) == CatchUpClaim(appliedUntilMs: t0 + 3 * minute))
        // A failed span gives the lease back and leaves the cursor.
        try await release(ledger, "c", until: nil, at: t0 + 10 * minute)
        #expect(try await claim(ledger, "d", at: t0 + 10 * minute) == CatchUpClaim(appliedUntilMs: t0 + 3 * minute))
    }

    @Test(arguments: StoreKind.allCases) func eachEnvironmentHasItsOwnCursor(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await claim(ledger, "a", at: t0, environment: .production)
        try await release(ledger, "a", until: t0, at: t0, environment: .production)
        #expect(try await claim(ledger, "a", at: t0 + minute, environment: .sandbox) == CatchUpClaim(appliedUntilMs: nil))
        #expect(try await claim(ledger, "b", at: t0 + minute, environment: .production) == CatchUpClaim(appliedUntilMs: t0))
    }

    @Test func theCursorSurvivesARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-catchup-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let ledger = try await LedgerFixture(store: try SQLiteLedgerStore.open(directory: directory))
            _ = try await claim(ledger, "a", at: t0)
            try await release(ledger, "a", until: t0 + 42, at: t0)
        }
        let reopened = try await LedgerFixture(store: try SQLiteLedgerStore.open(directory: directory))
        #expect(try await claim(reopened, "b", at: t0 + minute) == CatchUpClaim(appliedUntilMs: t0 + 42))
    }

    @Test func theSpanOverlapsTheCursorAndCatchesUpALongAbsenceSpanBySpan() {
        let now = t0 + 24 * 60 * minute
        let first = CatchUpWindow(after: nil, nowMs: now)
        #expect(first == CatchUpWindow(startMs: now - CatchUpWindow.firstLookbackMs, endMs: now, reachesNow: true))
        let next = CatchUpWindow(after: now - 3 * minute, nowMs: now)
        #expect(next == CatchUpWindow(startMs: now - 3 * minute - CatchUpWindow.overlapMs, endMs: now, reachesNow: true))
        // Down for a day: an hour at a time, each starting before the last one's end.
        let behind = CatchUpWindow(after: t0, nowMs: now)
        #expect(behind.startMs == t0 - CatchUpWindow.overlapMs)
        #expect(behind.endMs == behind.startMs + CatchUpWindow.maxSpanMs)
        #expect(!behind.reachesNow)
        // Apple keeps 180 days: never asked for older.
        let ancient = CatchUpWindow(after: 0, nowMs: now)
        #expect(ancient.startMs == now - CatchUpWindow.retentionMs)
        // A cursor ahead of the clock (the clock went back) asks for nothing before now.
        let ahead = CatchUpWindow(after: now + minute, nowMs: now)
        #expect(ahead == CatchUpWindow(startMs: now - CatchUpWindow.overlapMs + minute, endMs: now, reachesNow: true))
    }
}
