/// What `storekeeper db import` did, table by table.
public struct SQLiteImportReport: Sendable {
    /// One table: rows on each side and the SHA-256 of each side's rows (in
    /// key order, each in one canonical encoding), PostgreSQL's computed from
    /// the rows read back after the import, not from those sent.
    public struct Table: Sendable {
        public let name: String
        public let sqliteRows: Int
        public let postgresRows: Int
        /// Rows this run inserted (0 on a re-run).
        public let insertedRows: Int
        public let sqliteSHA256: String
        public let postgresSHA256: String

        public var matches: Bool { sqliteRows == postgresRows && sqliteSHA256 == postgresSHA256 }
    }

    /// The SQLite file read.
    public let sqlitePath: String
    /// PostgreSQL schema migrations applied first (empty when it was up to date).
    public let migrationsApplied: [String]
    public let tables: [Table]
    /// True when every table matched and the import was committed; otherwise it
    /// was rolled back and PostgreSQL holds what it held before (the counts
    /// and checksums above are those seen inside the rolled-back transaction).
    public let committed: Bool
}
