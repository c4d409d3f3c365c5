import Contracts
import GRDB
import GRDBSQLite
import Testing

@testable import Ledger

/// A group's units run together with no savepoint; only a group in which one
/// fails runs again, each unit in a savepoint of its own (SQLite counts the runs
/// of the writer's held SAVEPOINT statement).
@Suite("SQLite group commits: savepoints only when a unit fails")
struct GroupSavepointsTests {
    let t0 = Make.t0
    let rules = LedgerRules(policy: .keep)

    func record(_ store: SQLiteLedgerStore, _ works: [(user: String, transactions: [String])]) async throws
        -> [UnitOutcome<LedgerWorkOutput>]
    {
        let (rules, t0) = (rules, t0)
        return try await store.commit(units: works.count) { unit, session in
            try rules.apply(
                .record(.with {
                    $0.userID = works[unit].user
                    $0.result = Make.result(works[unit].transactions.map { Make.transaction($0, purchased: t0) })
                }), requestID: "r-\(works[unit].user)", now: t0, session: session)
        }
    }

    func savepointRuns(_ store: SQLiteLedgerStore) async throws -> Int32 {
        try await store.writer.write { db in
            let savepoint = try store.writerStatements.statement(.savepoint, "SAVEPOINT unit", in: db)
            return sqlite3_stmt_status(savepoint.sqliteStatement, SQLITE_STMTSTATUS_RUN, 0)
        }
    }

    @Test func unitsThatAllSucceedRunTogetherAndAFailureRunsTheGroupAgainInSavepoints() async throws {
        let store = try SQLiteLedgerStore.inMemory()
        let first = try await record(store, [("u-1", ["a"]), ("u-2", ["b"]), ("u-3", ["c"])])
        #expect(first.allSatisfy { (try? $0.result.get()) != nil })
        #expect(first.map { $0.events.map(\.event.seq) } == [[1], [2], [3]])
        #expect(try await savepointRuns(store) == 0, "no savepoint when every unit succeeds")

        // u-5 claims "a", bound to u-1 under the keep policy: it fails, alone.
        let second = try await record(store, [("u-4", ["d"]), ("u-5", ["e", "a"]), ("u-6", ["f"])])
        #expect(try await savepointRuns(store) == 3, "the group ran again, each unit in a savepoint")
        #expect((try? second[0].result.get()) != nil)
        #expect(throws: LedgerFailure.alreadyBound) { try second[1].result.get() }
        #expect((try? second[2].result.get()) != nil)
        #expect(second.map { $0.events.map(\.event.seq) } == [[4], [], [5]], "the failed unit took no seq, nor did the undone attempt")
        let (e, d, f) = try await store.read { reader in
            (
                try reader.owner(of: SubscriptionKey(.sandbox, "e")), try reader.owner(of: SubscriptionKey(.sandbox, "d")),
                try reader.owner(of: SubscriptionKey(.sandbox, "f"))
            )
        }
        #expect(e == nil, "the failed unit's binding was undone")
        #expect(d == "u-4" && f == "u-6", "the others' bindings were kept, once")
        #expect(try await store.read { try $0.headSeq() } == 5)
    }
}
