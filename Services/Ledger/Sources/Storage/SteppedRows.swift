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
        return try steppedRows(transform)
    }

    /// The first row mapped in place, or nil; as `mapRows`.
    func mapFirstRow<T>(arguments: StatementArguments, _ transform: (SteppedRow) throws -> T) throws -> T? {
        try setArguments(arguments)
        return try steppedFirstRow(transform)
    }

    /// The rows of a statement whose parameters are bound; it is reset after.
    fileprivate func steppedRows<T>(_ transform: (SteppedRow) throws -> T) throws -> [T] {
        defer { sqlite3_reset(sqliteStatement) }
        var rows: [T] = []
        while try step() { rows.append(try transform(SteppedRow(sqliteStatement: sqliteStatement))) }
        return rows
    }

    fileprivate func steppedFirstRow<T>(_ transform: (SteppedRow) throws -> T) throws -> T? {
        defer { sqlite3_reset(sqliteStatement) }
        return try step() ? try transform(SteppedRow(sqliteStatement: sqliteStatement)) : nil
    }

    /// Whether SQLite stepped onto a row (false when done). An interrupted read is a
    /// cancelled one, as GRDB reports it.
    fileprivate func step() throws -> Bool {
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

/// Values bound straight to a statement's parameters, in order, with SQLite's C
/// API. GRDB's `StatementArguments` boxes each value as an existential,
/// converts it to a `DatabaseValue` and checks them on every execution: about
/// 30,000 instructions of the 200,000 a transaction costs the ledger alone
/// (callgrind), for the few statements every transaction runs.
struct ParameterBinder {
    fileprivate let sqliteStatement: SQLiteStatement
    fileprivate var index: CInt = 1
    /// The first bind that failed (out of memory, say), reported before the statement runs.
    fileprivate var failure = SQLITE_OK

    mutating func text(_ value: String?) {
        guard var value else { return null() }
        // SQLITE_TRANSIENT: SQLite copies the bytes before this returns.
        let code = value.withUTF8 { utf8 -> CInt in
            // An empty string still needs a pointer: a null one would bind NULL.
            guard let base = utf8.baseAddress else { return sqlite3_bind_text(sqliteStatement, index, "", 0, Self.transient) }
            // Up to a NUL, as GRDB binds a string (a C string): a value bound here must equal
            // the same value bound by GRDB's statements elsewhere.
            let length = utf8.firstIndex(of: 0) ?? utf8.count
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(sqliteStatement, index, $0, CInt(length), Self.transient)
            }
        }
        advance(code)
    }

    mutating func integer(_ value: Int64?) {
        guard let value else { return null() }
        advance(sqlite3_bind_int64(sqliteStatement, index, value))
    }

    mutating func bool(_ value: Bool?) {
        integer(value.map { $0 ? 1 : 0 })
    }

    mutating func blob(_ bytes: [UInt8]) {
        let code = bytes.withUnsafeBytes { raw in
            // An empty blob still needs a pointer: a null one would bind NULL.
            sqlite3_bind_blob(sqliteStatement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), CInt(raw.count), Self.transient)
        }
        advance(code)
    }

    mutating func null() {
        advance(sqlite3_bind_null(sqliteStatement, index))
    }

    private mutating func advance(_ code: CInt) {
        if code != SQLITE_OK, failure == SQLITE_OK { failure = code }
        index += 1
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

extension Statement {
    /// Binds every parameter with `bind`, then runs the statement to its end (an
    /// INSERT or UPDATE), skipping what `mapRows` says it skips of GRDB.
    func run(_ bind: (inout ParameterBinder) -> Void) throws {
        try bindDirectly(bind)
        _ = try steppedRows { _ in () }
    }

    /// Every row, each mapped in place as `mapRows(arguments:)` maps them, with the parameters bound by `bind`.
    func mapRows<T>(_ bind: (inout ParameterBinder) -> Void, _ transform: (SteppedRow) throws -> T) throws -> [T] {
        try bindDirectly(bind)
        return try steppedRows(transform)
    }

    /// The first row mapped in place, or nil, with the parameters bound by `bind`.
    func mapFirstRow<T>(_ bind: (inout ParameterBinder) -> Void, _ transform: (SteppedRow) throws -> T) throws -> T? {
        try bindDirectly(bind)
        return try steppedFirstRow(transform)
    }

    private func bindDirectly(_ bind: (inout ParameterBinder) -> Void) throws {
        sqlite3_reset(sqliteStatement)
        sqlite3_clear_bindings(sqliteStatement)
        var binder = ParameterBinder(sqliteStatement: sqliteStatement)
        bind(&binder)
        guard binder.failure == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: binder.failure), message: "a parameter could not be bound", sql: sql)
        }
        // A statement's parameters are bound in full or it is a programming error, as GRDB's count check.
        precondition(binder.index - 1 == sqlite3_bind_parameter_count(sqliteStatement), "parameters bound: \(binder.index - 1) of \(sql)")
    }
}
