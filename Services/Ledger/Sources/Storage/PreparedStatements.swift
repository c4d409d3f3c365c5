import GRDB
import GRDBSQLite

/// The statements a verification runs, each named once. A session finds each
/// in GRDB's cache the first time it runs it and then holds it: GRDB's cache
/// is keyed by the SQL text, and hashing the text on every call cost about
/// 8,000 instructions of each recorded transaction (callgrind, the ledger
/// alone), more than binding all its parameters. Each slot has one SQL text,
/// which debug builds check on every use.
enum StatementSlot: Int, CaseIterable {
    case begin, commit, savepoint, releaseSavepoint, rollbackToSavepoint
    case transaction, insertTransaction, updateTransaction, unclaimedTransactions, transactionsOfPurchase
    case setGrantedSeq
    case owner, bindIfUnbound
    case subscription, hasSubscription, subscriptionsOwnedBy, saveSubscription
    case statedLastingInOrder, statedOrListedLasting
    case appendEvent, headSeq
    case idempotentAnswer, storeIdempotentAnswer
}

/// One session's statements by slot. Only for the life of one write or read
/// (a group commit): GRDB owns the statements and may drop them from its cache
/// between writes.
struct PreparedStatements {
    private static let slots = StatementSlot.allCases.count
    private var statements = [Statement?](repeating: nil, count: slots)

    mutating func statement(_ slot: StatementSlot, _ sql: @autoclosure () -> String, in db: Database) throws -> Statement {
        if let statement = statements[slot.rawValue] {
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
