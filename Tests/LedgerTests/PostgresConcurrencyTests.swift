import Contracts
import Logging
import NIOPosix
import PostgresTestServer
import Synchronization
import Testing

@testable import Ledger

/// Several ledgers on one PostgreSQL, all writing at the same instant: each
/// rule holds across them, not only within one process.
@Suite("PostgreSQL: several ledgers at once")
struct PostgresConcurrencyTests {
    let t0 = Make.t0

    /// Two ledgers (stores) on one new database.
    static func twoLedgers() async throws -> (PostgresLedgerStore, PostgresLedgerStore) {
        let url = try await PostgresTestServer.shared().newDatabase()
        // Migrated by both at once: the advisory lock makes that safe.
        async let first = PostgresLedgerStore.open(url: url, logger: Logger(label: "ledger-1"), readers: 1)
        async let second = PostgresLedgerStore.open(url: url, logger: Logger(label: "ledger-2"), readers: 1)
        return try await (first, second)
    }

    /// Runs `works` as one group commit on `store`.
    static func commit(
        _ works: [LedgerWork], on store: PostgresLedgerStore, rules: LedgerRules, at now: Int64
    ) async throws -> [Result<LedgerWorkOutput, any Error>] {
        try await store.commit(units: works.count) { unit, session in
            try rules.apply(works[unit], requestID: "r-\(unit)", now: now, session: session)
        }.map(\.result)
    }

    static func record(_ user: String, _ result: VerifyResult) -> LedgerWork {
        .record(RecordRequest.with {
            $0.userID = user
            $0.result = result
        })
    }

    @Test func twoLedgersRecordingTheSameReceiptsAtOnceGrantEachTransactionOnce() async throws {
        let (a, b) = try await Self.twoLedgers()
        let rules = LedgerRules(policy: .transfer)
        // 40 purchases of 3 transactions each, every one presented to both ledgers in the same instant.
        let receipts = (0..<40).map { Make.result(Make.renewals("\(5_000 + $0)", count: 3)) }
        let works = receipts.map { Self.record("u-1", $0) }
        async let onA = Self.commit(works, on: a, rules: rules, at: t0)
        async let onB = Self.commit(works.reversed(), on: b, rules: rules, at: t0)
        let outcomes = try await onA + onB
        var granted: [String] = []
        for outcome in outcomes {
            guard case .recorded(let recorded) = try outcome.get() else { throw LedgerFixture.Unexpected() }
            granted += recorded.granted.map(\.transactionID)
        }
        #expect(granted.count == 120, "each of the 120 transactions granted once across both ledgers")
        #expect(Set(granted).count == 120)

        try await a.numberPendingEvents()
        let events = try await a.read { try $0.events(after: 0, limit: 10_000) }
        #expect(events.map(\.seq) == Array(1...UInt64(events.count)), "seq gapless from 1")
        let grantEvents = events.filter { $0.topic == "transaction.granted" }
        #expect(grantEvents.count == 120, "one transaction.granted per transaction")
        let listed = try await b.read { try $0.creditedTransactions(of: "u-1", after: nil, limit: 1_000) }
        #expect(Set(listed.map(\.grantedSeq)) == Set(grantEvents.map(\.seq)), "granted_seq is the event's seq")
    }

    @Test func twoLedgersClaimingTheCatchUpAtOnceNeverBothGetIt() async throws {
        let (a, b) = try await Self.twoLedgers()
        let rules = LedgerRules(policy: .transfer)
        // The first round races to insert the cursor, the others to update it.
        for round in 0..<10 {
            let now = t0 + Int64(round) * Make.minute
            async let onA = Self.commit([.claimCatchUp(.production, holder: "a", leaseMs: 30_000)], on: a, rules: rules, at: now)
            async let onB = Self.commit([.claimCatchUp(.production, holder: "b", leaseMs: 30_000)], on: b, rules: rules, at: now)
            let outcomes = try await onA + onB
            let holders = zip(["a", "b"], outcomes).compactMap { holder, outcome -> String? in
                guard case .success(.catchUp(let claim)) = outcome, claim != nil else { return nil }
                return holder
            }
            #expect(holders.count == 1, "round \(round): \(outcomes)")
            guard let holder = holders.first else { continue }
            _ = try await Self.commit(
                [.releaseCatchUp(.production, holder: holder, appliedUntil: now)], on: holder == "a" ? a : b, rules: rules, at: now)
        }
    }

    @Test func underKeepOnlyOneOfTwoUsersRacingForAPurchaseGetsIt() async throws {
        let (a, b) = try await Self.twoLedgers()
        let rules = LedgerRules(policy: .keep)
        let receipt = Make.result(Make.renewals("7000", count: 2))
        async let onA = Self.commit([Self.record("u-a", receipt)], on: a, rules: rules, at: t0)
        async let onB = Self.commit([Self.record("u-b", receipt)], on: b, rules: rules, at: t0)
        let outcomes = try await onA + onB
        let winners = outcomes.compactMap { outcome -> String? in
            guard case .success(.recorded(let recorded)) = outcome else { return nil }
            return recorded.userID
        }
        #expect(winners.count == 1)
        let refused = outcomes.filter {
            if case .failure(let failure as LedgerFailure) = $0 { return failure == .alreadyBound }
            return false
        }
        #expect(refused.count == 1, "the other user is told already_bound")
        let owner = try await a.read { try $0.owner(of: SubscriptionKey(.sandbox, "7000")) }
        #expect(owner == winners.first)
    }

    @Test func aNotificationDeliveredToBothLedgersIsAppliedOnce() async throws {
        let (a, b) = try await Self.twoLedgers()
        let rules = LedgerRules(policy: .transfer)
        _ = try await Self.commit([Self.record("u-1", Make.result(Make.renewals("8000", count: 1)))], on: a, rules: rules, at: t0)
        let renewal = Make.notification(
            "DID_RENEW", id: "n-1", otid: "8000", transactions: Make.renewals("8000", count: 2), signed: t0 + 1)
        async let onA = Self.commit([.notification(renewal)], on: a, rules: rules, at: t0 + 2)
        async let onB = Self.commit([.notification(renewal)], on: b, rules: rules, at: t0 + 2)
        let applied = try await (onA + onB).map { outcome -> Bool in
            guard case .notified(let notified) = try outcome.get() else { throw LedgerFixture.Unexpected() }
            return notified.applied
        }
        #expect(applied.filter { $0 }.count == 1, "applied by one ledger; the other sees it applied")
        try await a.numberPendingEvents()
        let grants = try await a.read { try $0.events(after: 0, limit: 100) }.filter { $0.topic == "transaction.granted" }
        #expect(grants.count == 2, "the purchase and its renewal, each once")
    }

    /// PostgreSQL sequences do not commit in order: an event whose row id is
    /// older but whose transaction commits later must still be numbered, after
    /// the ones already numbered, never skipped.
    @Test func anEventCommittedLateIsNumberedNextAndNeverSkipped() async throws {
        let url = try await PostgresTestServer.shared().newDatabase()
        let store = try await PostgresLedgerStore.open(url: url, logger: Logger(label: "test"), readers: 1)
        // Blocking calls, off the cooperative pool.
        let blocking = NIOThreadPool.singleton
        let late = try await blocking.runIfActive { try BlockingPostgresConnection.connect(url, logger: Logger(label: "late")) }
        let insert = "INSERT INTO events (topic, occurred_at_ms, event) VALUES ($1, 1, $2)"
        @Sendable func event(_ topic: String) throws -> PostgresBind {
            .bytes(try LedgerEvent.with { $0.topic = topic }.serializedBytes())
        }
        _ = try await blocking.runIfActive {
            try late.query("BEGIN")
            try late.query(insert, [.text("late"), try event("late")])  // takes the lower id, commits later
        }
        _ = try await blocking.runIfActive {
            let early = try BlockingPostgresConnection.connect(url, logger: Logger(label: "early"))
            defer { early.close() }
            try early.query(insert, [.text("early"), try event("early")])
        }
        try await store.numberPendingEvents()
        var events = try await store.read { try $0.events(after: 0, limit: 10) }
        #expect(events.map(\.topic) == ["early"])
        _ = try await blocking.runIfActive { try late.query("COMMIT") }
        try await store.numberPendingEvents()
        events = try await store.read { try $0.events(after: 0, limit: 10) }
        #expect(events.map(\.topic) == ["early", "late"])
        #expect(events.map(\.seq) == [1, 2])
        try await blocking.runIfActive { late.close() }
    }
}
