import GRDB
import GRDBSQLite

/// The row a statement is on, read by column index straight from SQLite. A
/// value that does not convert is a programming error here, as it is in GRDB's
/// `Row` subscript.
struct SteppedRow {
    fileprivate let sqliteStatement: SQLiteStatement

    subscript<Value: DatabaseValueConvertible & StatementColumnConvertible>(_ index: Int) -> Value {
        guard let value = Value.fromStatement(sqliteStatement, atUncheckedIndex: CInt(index)) else {
            fatalError("the ledger's column \(index) does not hold a \(Value.self)")
        }
        return value
    }
}

extension Statement {
    /// Every row of the statement, each mapped in place. GRDB's `Row` fetches
    /// build a lower-cased index of the column names on every execution (rows
    /// or none): about 40,000 instructions for a transaction's 16 columns, the
    /// largest single cost of the reads each verification makes.
    ///
    /// Stepping SQLite directly skips what GRDB does around a statement: its
    /// aborted-transaction check (the group's commit still makes it), dropping a
    /// failed statement from its cache, and arguments in error messages. Only
    /// for SELECTs, with transforms that run no other statement (a cached
    /// statement is one object: running its SQL again would reset this one).
    func mapRows<T>(arguments: StatementArguments, _ transform: (SteppedRow) throws -> T) throws -> [T] {
        try setArguments(arguments)
        defer { sqlite3_reset(sqliteStatement) }
        var rows: [T] = []
        while try step() { rows.append(try transform(SteppedRow(sqliteStatement: sqliteStatement))) }
        return rows
    }

    /// The first row mapped in place, or nil; as `mapRows`.
    func mapFirstRow<T>(arguments: StatementArguments, _ transform: (SteppedRow) throws -> T) throws -> T? {
        try setArguments(arguments)
        defer { sqlite3_reset(sqliteStatement) }
        return try step() ? try transform(SteppedRow(sqliteStatement: sqliteStatement)) : nil
    }

    /// Whether SQLite stepped onto a row (false when done). An interrupted read is a
    /// cancelled one, as GRDB reports it.
    private func step() throws -> Bool {
        let code = sqlite3_step(sqliteStatement)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case SQLITE_INTERRUPT: throw CancellationError()
        default:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
        }
    }
}
