import GRDB
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
