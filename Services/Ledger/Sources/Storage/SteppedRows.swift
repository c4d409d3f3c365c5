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
    func mapRows<T>(arguments: StatementArguments, _ transform: (SteppedRow) throws -> T) throws -> [T] {
        try setArguments(arguments)
        defer { sqlite3_reset(sqliteStatement) }
        var rows: [T] = []
        while true {
            let code = sqlite3_step(sqliteStatement)
            switch code {
            case SQLITE_DONE: return rows
            case SQLITE_ROW: rows.append(try transform(SteppedRow(sqliteStatement: sqliteStatement)))
            default:
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
            }
        }
    }

    /// The first row mapped in place, or nil.
    func mapFirstRow<T>(arguments: StatementArguments, _ transform: (SteppedRow) throws -> T) throws -> T? {
        try setArguments(arguments)
        defer { sqlite3_reset(sqliteStatement) }
        let code = sqlite3_step(sqliteStatement)
        switch code {
        case SQLITE_DONE: return nil
        case SQLITE_ROW: return try transform(SteppedRow(sqliteStatement: sqliteStatement))
        default:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
        }
    }
}
