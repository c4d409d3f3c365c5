import GRDB
import GRDBSQLite
import Testing

@testable import Ledger

@Suite("A session's held statements")
struct PreparedStatementsTests {
    /// GRDB drops a failed statement from its cache without resetting it; a session that holds
    /// it must still run it again (its next run would otherwise report the old failure).
    @Test func aHeldStatementThatFailedRunsAgain() async throws {
        let store = try SQLiteLedgerStore.inMemory()
        try await store.writer.write { db in
            let session = SQLiteLedgerSession(db: db)
            #expect(throws: DatabaseError.self, "no savepoint to release") {
                try session.cached(.releaseSavepoint, "RELEASE SAVEPOINT unit").execute()
            }
            try session.cached(.savepoint, "SAVEPOINT unit").execute()
            try session.cached(.releaseSavepoint, "RELEASE SAVEPOINT unit").execute()
        }
    }
}

@Suite("The writer's held statements")
struct WriterStatementsTests {
    /// The store's groups share the writer's statements: the second group runs the very
    /// statement the first prepared (SQLite counts its runs), though it failed there.
    @Test func aStatementOutlivesItsGroupAndAFailureInIt() async throws {
        let store = try SQLiteLedgerStore.inMemory()
        _ = try await store.commit(units: 1) { _, session in
            let session = try #require(session as? SQLiteLedgerSession)
            #expect(throws: DatabaseError.self, "no savepoint to release") {
                try session.cached(.releaseSavepoint, "RELEASE SAVEPOINT unit").execute()
            }
        }
        let runs = try await store.commit(units: 1) { _, session in
            let session = try #require(session as? SQLiteLedgerSession)
            try session.cached(.savepoint, "SAVEPOINT unit").execute()
            let release = try session.cached(.releaseSavepoint, "RELEASE SAVEPOINT unit")
            try release.execute()
            return sqlite3_stmt_status(release.sqliteStatement, SQLITE_STMTSTATUS_RUN, 0)
        }
        #expect(try runs[0].result.get() == 2, "run in both groups")
    }
}
