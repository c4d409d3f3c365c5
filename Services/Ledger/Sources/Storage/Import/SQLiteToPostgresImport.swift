import GRDB
import Logging
import NIOCore
import NIOPosix
import StorekeeperCore

/// `storekeeper db import --from-sqlite PATH`: moves an SQLite ledger into
/// PostgreSQL with nothing lost, every row of every table with every column
/// (events keep their seq, so subscribers resume with the seq they hold).
///
/// - The SQLite file is opened read-only and must be a ledger at this
///   version's schema; it is checked before PostgreSQL is touched.
/// - No ledger may run on the target: the import holds the event numberer's
///   lock, so none can number events meanwhile, and refuses when one holds it.
/// - The target is migrated, then everything happens in ONE transaction, read
///   from one SQLite snapshot: rows go in batches with `ON CONFLICT DO
///   NOTHING` on each table's key, and a row already there must be identical
///   (a re-run inserts nothing; a target holding other data is refused).
/// - Before committing, each table is read back from PostgreSQL and both sides
///   are counted and hashed alike; the import commits only when every table
///   matches (a target holding extra rows does not), else it rolls back.
public struct SQLiteToPostgresImport: Sendable {
    /// A statement may sort a whole table when it is read back (text keys in byte order).
    static let statementTimeout: TimeAmount = .minutes(30)

    public let sqlitePath: String
    public let target: DatabaseURL
    private let logger: Logger

    /// `sqlitePath`: the ledger's `ledger.sqlite`, or the directory holding it (`STOREKEEPER_DATA_DIR`).
    public init(sqlitePath: String, target: DatabaseURL, logger: Logger) {
        self.sqlitePath = sqlitePath
        self.target = target
        self.logger = logger
    }

    /// Throws `SQLiteImportError` when it refuses or fails; PostgreSQL is then unchanged.
    public func run() async throws -> SQLiteImportReport {
        // Blocking calls (SQLite, and PostgreSQL through BlockingPostgresConnection), off the cooperative pool.
        try await NIOThreadPool.singleton.runIfActive { try self.runBlocking() }
    }

    private func runBlocking() throws -> SQLiteImportReport {
        let source = try SQLiteLedgerSource.open(path: sqlitePath)
        do {
            let db = try BlockingPostgresConnection.connect(target, logger: logger, statementTimeout: Self.statementTimeout)
            defer { db.close() }
            let locked = try db.query("SELECT pg_try_advisory_lock($1)", [.int(EventSequencer.leaderLock)])
                .rows.first?.makeRandomAccess().bool(0) ?? false
            guard locked else { throw SQLiteImportError.ledgerRunning }
            defer { _ = try? db.query("SELECT pg_advisory_unlock($1)", [.int(EventSequencer.leaderLock)]) }
            let applied = try PostgresSchema.migrate(db, logger: logger)
            let (tables, committed) = try source.read { sqlite in
                try importInOneTransaction(from: sqlite, into: PostgresImportTarget(db: db))
            }
            return SQLiteImportReport(
                sqlitePath: source.path, migrationsApplied: applied, tables: tables, committed: committed)
        } catch let error as SQLiteImportError {
            throw error
        } catch {
            throw SQLiteImportError.failed(error)
        }
    }

    private func importInOneTransaction(
        from sqlite: Database, into target: PostgresImportTarget
    ) throws -> ([SQLiteImportReport.Table], Bool) {
        try target.db.query("BEGIN ISOLATION LEVEL REPEATABLE READ")
        do {
            var inserted: [Int] = []
            for table in ImportedTable.all { inserted.append(try copy(table, from: sqlite, into: target)) }
            var tables: [SQLiteImportReport.Table] = []
            for (table, insertedRows) in zip(ImportedTable.all, inserted) {
                tables.append(try compare(table, insertedRows: insertedRows, sqlite: sqlite, target: target))
            }
            let committed = tables.allSatisfy(\.matches)
            if committed {
                // Not transactional, so only once the import is sure to be kept.
                try target.advanceBindingHistoryIDs()
                try target.db.query("COMMIT")
            } else {
                try target.db.query("ROLLBACK")
            }
            return (tables, committed)
        } catch {
            _ = try? target.db.query("ROLLBACK")
            throw error
        }
    }

    /// Streams `table` from SQLite into PostgreSQL in batches; returns the rows inserted.
    private func copy(_ table: ImportedTable, from sqlite: Database, into target: PostgresImportTarget) throws -> Int {
        var inserted = 0
        var batch: [[ImportValue]] = []
        batch.reserveCapacity(PostgresImportTarget.batchSize)
        try SQLiteLedgerSource.rows(of: table, in: sqlite) { row in
            batch.append(row)
            guard batch.count == PostgresImportTarget.batchSize else { return }
            inserted += try target.insert(batch, into: table)
            batch.removeAll(keepingCapacity: true)
        }
        inserted += try target.insert(batch, into: table)
        logger.info("table imported", metadata: ["import.table": "\(table.name)", "import.inserted": "\(inserted)"])
        return inserted
    }

    /// Both sides of `table` counted and hashed, PostgreSQL's as read back now.
    private func compare(
        _ table: ImportedTable, insertedRows: Int, sqlite: Database, target: PostgresImportTarget
    ) throws -> SQLiteImportReport.Table {
        var sqliteSide = TableChecksum()
        try SQLiteLedgerSource.rows(of: table, in: sqlite) { sqliteSide.add($0) }
        var postgresSide = TableChecksum()
        try target.rows(of: table) { postgresSide.add($0) }
        return SQLiteImportReport.Table(
            name: table.name, sqliteRows: sqliteSide.rows, postgresRows: postgresSide.rows, insertedRows: insertedRows,
            sqliteSHA256: sqliteSide.finalize(), postgresSHA256: postgresSide.finalize())
    }
}
