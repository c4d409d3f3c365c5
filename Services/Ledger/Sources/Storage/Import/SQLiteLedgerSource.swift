import Foundation
import GRDB

/// The SQLite ledger an import reads: opened read-only (SQLite itself refuses
/// every write, and no migration runs), and accepted only when it is a
/// Storekeeper ledger at exactly the schema this build knows.
struct SQLiteLedgerSource: Sendable {
    /// The database file read (a directory is taken to hold `ledger.sqlite`).
    let path: String
    private let queue: DatabaseQueue

    private init(path: String, queue: DatabaseQueue) {
        self.path = path
        self.queue = queue
    }

    static func open(path given: String) throws -> SQLiteLedgerSource {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: given, isDirectory: &isDirectory) else {
            throw SQLiteImportError.notALedger(path: given, reason: "there is no such file")
        }
        let path = isDirectory.boolValue ? URL(fileURLWithPath: given).appendingPathComponent(SQLiteLedgerStore.fileName).path : given
        guard FileManager.default.fileExists(atPath: path) else {
            throw SQLiteImportError.notALedger(path: given, reason: "the directory holds no \(SQLiteLedgerStore.fileName)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        // A ledger still running holds its write lock only for a commit's few milliseconds.
        configuration.busyMode = .timeout(10)
        do {
            let source = SQLiteLedgerSource(path: path, queue: try DatabaseQueue(path: path, configuration: configuration))
            try source.queue.read(source.checkSchema)
            return source
        } catch let error as DatabaseError {
            throw SQLiteImportError.notALedger(path: path, reason: Self.reason(error))
        }
    }

    /// Runs `body` in one read transaction: every table is read from the same snapshot.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try queue.read(body)
    }

    /// Calls `each` with every row of `table` in key order (SQLite's BINARY
    /// collation: byte order), streaming through a cursor.
    static func rows(of table: ImportedTable, in db: Database, _ each: ([ImportValue]) throws -> Void) throws {
        let rows = try Row.fetchCursor(
            db, sql: "SELECT \(table.columnList) FROM \(table.name) ORDER BY \(table.key.joined(separator: ", "))")
        while let row = try rows.next() {
            var cells: [ImportValue] = []
            cells.reserveCapacity(table.columns.count)
            for (index, column) in table.columns.enumerated() {
                guard let cell = ImportValue(row[index] as DatabaseValue, column.kind) else {
                    throw SQLiteImportError.unexpectedValue(table: table.name, column: column.name)
                }
                cells.append(cell)
            }
            try each(cells)
        }
    }

    /// Every migration this build registers but those that only add an index,
    /// and no other (an older ledger lacks columns; a newer one may have columns
    /// this import would drop), and every column of every table imported.
    private func checkSchema(_ db: Database) throws {
        let known = LedgerSchema.migrator.migrations
        guard try db.tableExists("grdb_migrations") else {
            throw SQLiteImportError.notALedger(path: path, reason: "it holds no Storekeeper ledger tables")
        }
        let applied = try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations")
        if let unknown = applied.subtracting(known).sorted().first {
            throw SQLiteImportError.notALedger(
                path: path, reason: "its schema has migration '\(unknown)', unknown to this storekeeper (a newer version wrote it)")
        }
        if let missing = known.first(where: { !applied.contains($0) && !LedgerSchema.indexOnlyMigrations.contains($0) }) {
            throw SQLiteImportError.notALedger(
                path: path, reason: "its schema lacks migration '\(missing)': start the ledger of this version on it once")
        }
        for table in ImportedTable.all {
            guard try db.tableExists(table.name) else {
                throw SQLiteImportError.notALedger(path: path, reason: "it has no table \(table.name)")
            }
            let present = Set(try db.columns(in: table.name).map(\.name))
            if let absent = table.columns.first(where: { !present.contains($0.name) }) {
                throw SQLiteImportError.notALedger(path: path, reason: "table \(table.name) has no column \(absent.name)")
            }
        }
    }

    private static func reason(_ error: DatabaseError) -> String {
        switch error.resultCode {
        case .SQLITE_NOTADB: "it is not an SQLite database"
        case .SQLITE_CANTOPEN: "it cannot be opened"
        case .SQLITE_CORRUPT: "it is corrupt"
        default: "SQLite cannot read it (\(error.resultCode))"
        }
    }
}

extension ImportValue {
    /// `value` read as a column of `kind` holds it; nil when the ledger never
    /// writes such a value there (the import refuses rather than guess).
    init?(_ value: DatabaseValue, _ kind: ImportedTable.Kind) {
        switch (value.storage, kind) {
        case (.null, _): self = .null
        case (.string(let text), .text): self = .text(text)
        case (.int64(let number), .integer): self = .integer(number)
        case (.int64(let number), .boolean) where number == 0 || number == 1: self = .boolean(number == 1)
        case (.blob(let data), .bytes): self = .bytes(Array(data))
        default: return nil
        }
    }
}
