import GRDB
import GRDBSQLite

/// The statements a verification runs, each named once. They are found in
/// GRDB's cache the first time and then held (`PreparedStatements`): GRDB's
/// cache is keyed by the SQL text, and hashing the text on every call cost
/// about 8,000 instructions of each recorded transaction (callgrind, the
/// ledger alone), more than binding all its parameters. Each slot has one SQL
/// text, which debug builds check on every use.
enum StatementSlot: Int, CaseIterable {
    case begin, commit, savepoint, releaseSavepoint, rollbackToSavepoint
    case transaction, insertTransaction, updateTransaction, unclaimedTransactions, transactionsOfPurchase
    case setGrantedSeq
    case owner, bindIfUnbound
    case subscription, hasSubscription, subscriptionsOwnedBy, saveSubscription
    case statedLasting, statedOrListedLasting
    case appendEvent, headSeq
    case idempotentAnswer, storeIdempotentAnswer
}

/// Statements by slot, held for one connection. A read session holds its own for the
/// life of its read. The writer connection's are held by the store from one group
/// commit to the next, and that is where they pay: looking each up anew in every group
/// cost a request alone in its group about 20,000 instructions (callgrind).
///
/// `@unchecked Sendable`: an instance is used only inside the connection's own GRDB
/// closures, which GRDB runs one at a time on that connection's serial queue; that
/// queue is the lock. Statements that GRDB drops from its cache live on here
/// (finalized when this is released); the ledger changes no schema while it runs.
final class PreparedStatements: @unchecked Sendable {
    private static let slots = StatementSlot.allCases.count
    private var statements = [Statement?](repeating: nil, count: slots)

    func statement(_ slot: StatementSlot, _ sql: @autoclosure () -> String, in db: Database) throws -> Statement {
        if let statement = statements[slot.rawValue] {
            assert(sqlite3_db_handle(statement.sqliteStatement) == db.sqliteConnection, "slot \(slot) holds another connection's statement")
            assert(String(cString: sqlite3_sql(statement.sqliteStatement)) == sql(), "slot \(slot) holds another statement")
            // Reset here: GRDB drops a statement that failed from its cache without resetting it,
            // and its next `execute` would report the old failure again from `sqlite3_reset`.
            sqlite3_reset(statement.sqliteStatement)
            return statement
        }
        let statement = try db.cachedStatement(sql: sql())
        statements[slot.rawValue] = statement
        return statement
    }
}
