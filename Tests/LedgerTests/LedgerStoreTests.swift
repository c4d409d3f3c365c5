import Contracts
import Foundation
import GRDB
import Testing

@testable import Ledger

@Suite("SQLite store: durability settings, group commit isolation, the outbox")
struct LedgerStoreTests {
    let t0 = Make.t0

    static func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString)").path
        return path
    }

    @Test func aFileDatabaseIsWALWithSynchronousFullAndItsJournalsInMemory() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteLedgerStore.open(directory: directory)
        #expect(try await store.pragma("synchronous") == 2, "FULL")
        #expect(try await store.pragma("temp_store") == 2, "MEMORY: units' statement journals never spill to a file")
        let mode = try await store.writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    @Test func whatWasCommittedIsThereAfterReopening() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let ledger = try await LedgerFixture(store: try SQLiteLedgerStore.open(directory: directory))
            _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 2)), at: t0)
        }
        let reopened = try await LedgerFixture(store: try SQLiteLedgerStore.open(directory: directory))
        #expect(try await reopened.headSeq() == 2)
        let replay = try await reopened.record("u-1", Make.result(Make.renewals("1000", count: 2)), at: t0)
        #expect(replay.alreadyGranted.count == 2)
        #expect(replay.granted.isEmpty)
    }

    @Test func aFailedUnitIsUndoneAloneAndUsesNoSeq() async throws {
        let store = try SQLiteLedgerStore.inMemory()
        let rules = LedgerRules(policy: .keep)
        let t0 = self.t0
        let works: [(String, VerifyResult)] = [
            ("u-1", Make.result([Make.transaction("a", purchased: t0)])),
            ("u-2", Make.result([Make.transaction("a", purchased: t0), Make.transaction("b", purchased: t0)])),
            ("u-3", Make.result([Make.transaction("c", purchased: t0)])),
        ]
        let outcomes = try await store.commit(units: works.count) { unit, session in
            try rules.apply(
                .record(.with {
                    $0.userID = works[unit].0
                    $0.result = works[unit].1
                }), requestID: "r\(unit)", now: t0, session: session)
        }
        #expect(outcomes.count == 3)
        #expect((try? outcomes[0].result.get()) != nil)
        #expect(throws: LedgerFailure.alreadyBound) { try outcomes[1].result.get() }
        #expect(outcomes[1].events.isEmpty)
        #expect(outcomes[0].events.map(\.event.seq) == [1])
        #expect(outcomes[2].events.map(\.event.seq) == [2], "the failed unit consumed no seq")
        let owner = try await store.read { try $0.owner(of: SubscriptionKey(.sandbox, "b")) }
        #expect(owner == nil)
    }

    @Test func eventsAreStoredWithTheirChangeAndReplayInOrder() async throws {
        let ledger = try await LedgerFixture()
        for index in 0..<10 {
            _ = try await ledger.record(
                "u-\(index)", Make.result([Make.transaction("t\(index)", purchased: t0)]), at: t0, requestID: "r\(index)")
        }
        let events = try await ledger.events()
        #expect(events.map(\.seq) == Array(1...10))
        #expect(events.map(\.requestID) == (0..<10).map { "r\($0)" })
        #expect(events.map(\.transactionGranted.grant.transactionID) == (0..<10).map { "t\($0)" })
        let tail = try await ledger.events(after: 7)
        #expect(tail.map(\.seq) == [8, 9, 10])
    }

    @Test func pruningKeepsTheNewestEventSoTheHeadSurvives() async throws {
        let ledger = try await LedgerFixture()
        for index in 0..<5 {
            _ = try await ledger.record("u", Make.result([Make.transaction("t\(index)", purchased: t0)]), at: t0 + Int64(index))
        }
        guard case .count(let pruned) = try await ledger.apply(.pruneEvents(before: t0 + 3), at: t0 + 10) else {
            Issue.record("no count")
            return
        }
        #expect(pruned == 3)
        #expect(try await ledger.store.read { try $0.oldestRetainedSeq() } == 4)
        _ = try await ledger.apply(.pruneEvents(before: t0 + 1_000), at: t0 + 10)
        #expect(try await ledger.headSeq() == 5)
        #expect(try await ledger.store.read { try $0.oldestRetainedSeq() } == 5)
        _ = try await ledger.record("u", Make.result([Make.transaction("t9", purchased: t0)]), at: t0 + 20)
        #expect(try await ledger.events().map(\.seq) == [5, 6])
    }

    /// Pruning goes in `seq` order and stops at the first young event: one recorded with an
    /// earlier time after it (a clock stepped back) waits for a later sweep, never the reverse.
    @Test func pruningStopsAtTheFirstEventStillYoung() async throws {
        let ledger = try await LedgerFixture()
        for (index, offset) in [0, 1, 5, 2, 6].enumerated() {
            _ = try await ledger.record("u", Make.result([Make.transaction("t\(index)", purchased: t0)]), at: t0 + Int64(offset))
        }
        guard case .count(let pruned) = try await ledger.apply(.pruneEvents(before: t0 + 3), at: t0 + 10) else {
            Issue.record("no count")
            return
        }
        #expect(pruned == 2)
        #expect(try await ledger.events().map(\.seq) == [3, 4, 5])
        _ = try await ledger.apply(.pruneEvents(before: t0 + 6), at: t0 + 10)
        #expect(try await ledger.events().map(\.seq) == [5])
    }
}

@Suite("SQLite query plans: the hot statements use their indexes")
struct LedgerQueryPlanTests {
    /// The plan SQLite makes for a statement the store runs (its own text, not a copy).
    static func plan(_ sql: String, _ arguments: StatementArguments) async throws -> String {
        let store = try SQLiteLedgerStore.inMemory()
        return try await store.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
                .joined(separator: "; ")
        }
    }

    @Test func aPurchasesTransactionsComeFromItsIndexInOrder() async throws {
        let plan = try await Self.plan(SQLiteLedgerSession.transactionsOfPurchaseSQL, ["Sandbox", "1"])
        #expect(plan.contains("USING INDEX transactions_by_original"), "\(plan)")
        #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
    }

    @Test func sweepsReadOnlyTheRowsThatNeedThem() async throws {
        for statement in [SQLiteLedgerSession.dueForRefreshSQL, SQLiteLedgerSession.renewingDueForRefreshSQL] {
            let refresh = try await Self.plan(statement, [1, 5])
            #expect(refresh.contains("subscriptions_refresh_due"), "\(refresh)")
        }
        let unstated = try await Self.plan(SQLiteLedgerSession.unstatedDueForRefreshSQL, [1, 5])
        #expect(unstated.contains("subscriptions_refresh_unknown"), "\(unstated)")
        let expired = try await Self.plan(SQLiteLedgerSession.newlyExpiredSQL, [1, 5])
        #expect(expired.contains("subscriptions_expiry_pending"), "\(expired)")
    }

    /// No index of the events' time to keep up at every commit: the sweep reads them by rowid.
    @Test func eventsArePrunedByTheirSeqWithNoIndexOfTheirTime() async throws {
        let prune = try await Self.plan(SQLiteLedgerSession.pruneEventsSQL, [1])
        #expect(prune.contains("USING INTEGER PRIMARY KEY"), "\(prune)")
        #expect(!prune.contains("SCAN"), "\(prune)")
        let store = try SQLiteLedgerStore.inMemory()
        let indexes = try await store.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'")
        }
        #expect(indexes.isEmpty, "\(indexes)")
    }
}
