import Contracts
import Foundation
import GRDB
import Logging
import NIOPosix
import PostgresTestServer
import StorekeeperCore
import Testing

@testable import Ledger

/// `storekeeper db import --from-sqlite`: an SQLite ledger written by the real
/// rules, moved into a real PostgreSQL, reads the same there, numbers on
/// after its head, imports again as a no-op, and nothing is changed when the
/// target or the file is not what the import expects.
@Suite("db import: SQLite ledger to PostgreSQL")
struct SQLiteToPostgresImportTests {
    static let logger = Logger(label: "test-import")

    static func runImport(_ path: String, into url: DatabaseURL) async throws -> SQLiteImportReport {
        try await SQLiteToPostgresImport(sqlitePath: path, target: url, logger: logger).run()
    }

    @Test func everyTableMovesWithMatchingChecksumsAndReadsTheSameOnPostgreSQL() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        // Its text sorts as a dictionary does, not by byte as SQLite does: checksums must not depend on it.
        let url = try await Self.newDictionaryOrderedDatabase()
        #expect(try await Self.integers(url, "SELECT ('B7' < 'a-7')::int") == [0])

        let report = try await Self.runImport(sample.directory, into: url)
        #expect(report.committed)
        #expect(report.sqlitePath == sample.file, "a directory is taken to hold ledger.sqlite")
        #expect(report.migrationsApplied == ["1-ledger", "2-server-api", "3-transaction-prices"])
        #expect(
            report.tables.map(\.name)
                == [
                    "transactions", "bindings", "binding_history", "subscriptions", "notifications", "idempotency_keys",
                    "catchup_cursor", "consumption_requests", "events",
                ])
        for table in report.tables {
            #expect(table.sqliteRows > 0, "\(table.name): the sample has rows in every table")
            #expect(table.postgresRows == table.sqliteRows, "\(table.name)")
            #expect(table.insertedRows == table.sqliteRows, "\(table.name)")
            #expect(table.sqliteSHA256 == table.postgresSHA256, "\(table.name)")
            #expect(table.sqliteSHA256.count == 64)
        }
        #expect(try await Self.targetDigest(url) == report.tables.map { "\($0.name) \($0.postgresRows) \($0.postgresSHA256)" })

        let postgres = try await PostgresLedgerStore.open(url: url, logger: Self.logger, readers: 1)
        try await Self.expectSameReads(sample.ledger.store, postgres, rules: sample.ledger.rules)
    }

    /// A migration that only adds an index leaves the rows as they were: a ledger without it imports.
    @Test func aLedgerWithoutAnIndexOnlyMigrationImports() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        let queue = try DatabaseQueue(path: sample.file)
        try await queue.write { db in
            try db.execute(sql: "DROP INDEX transactions_unclaimed")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [UnclaimedTransactionsMigration.name])
        }
        try queue.close()
        let url = try await PostgresTestServer.shared().newDatabase()
        let report = try await Self.runImport(sample.file, into: url)
        #expect(report.committed)
        #expect(report.tables.allSatisfy { $0.postgresRows == $0.sqliteRows && $0.sqliteSHA256 == $0.postgresSHA256 })
    }

    @Test func aSecondImportInsertsNothingAndSucceeds() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        let url = try await PostgresTestServer.shared().newDatabase()
        let first = try await Self.runImport(sample.file, into: url)
        let digest = try await Self.targetDigest(url)

        let second = try await Self.runImport(sample.file, into: url)
        #expect(second.committed)
        #expect(second.migrationsApplied.isEmpty)
        #expect(second.tables.map(\.insertedRows) == Array(repeating: 0, count: first.tables.count))
        #expect(second.tables.map(\.postgresSHA256) == first.tables.map(\.sqliteSHA256))
        #expect(second.tables.allSatisfy { $0.matches })
        #expect(try await Self.targetDigest(url) == digest)
    }

    @Test func theEventStreamNumbersOnAfterTheImportedHead() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        let url = try await PostgresTestServer.shared().newDatabase()
        _ = try await Self.runImport(sample.file, into: url)
        let imported = try await sample.ledger.events()
        let head = try await sample.ledger.headSeq()
        #expect(imported.first.map(\.seq) ?? 0 > 1, "the oldest events were pruned: seqs are kept, not renumbered")

        let onPostgres = try await LedgerFixture(
            on: PostgresLedgerStore.open(url: url, logger: Self.logger, readers: 1), catalog: SampleSQLiteLedger.catalog)
        #expect(try await onPostgres.headSeq() == head)
        #expect(try await onPostgres.events() == imported)
        // u-5 restores u-1's subscription (a move: a new binding_history row after the imported ids) ...
        _ = try await onPostgres.record("u-5", Make.result(Make.renewals("1000", count: 4)), at: SampleSQLiteLedger.now)
        #expect(try await onPostgres.owner("1000") == "u-5")
        // ... and u-6 buys something new.
        let bought = try await onPostgres.record(
            "u-6", Make.result([Make.transaction("6000", product: "com.example.coins100", purchased: Make.t0)]),
            at: SampleSQLiteLedger.now)
        #expect(bought.granted.map(\.transactionID) == ["6000"])

        let added = try await onPostgres.events(after: head)
        #expect(!added.isEmpty)
        #expect(added.map(\.seq) == Array(head + 1...head + UInt64(added.count)), "numbered from head + 1, no gap")
        let credited = try await onPostgres.store.read { try $0.creditedTransactions(of: "u-6", after: nil, limit: 10) }
        #expect(credited.map(\.grantedSeq).allSatisfy { $0 > head })
        let history = try await Self.integers(url, "SELECT id FROM binding_history ORDER BY id")
        #expect(history == [1, 2], "the imported move keeps id 1; the new one takes the next")
    }

    @Test func aTargetHoldingOtherValuesForTheSameKeyIsRefusedAndLeftAsItWas() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        let url = try await PostgresTestServer.shared().newDatabase()
        let target = try await LedgerFixture(on: PostgresLedgerStore.open(url: url, logger: Self.logger, readers: 1))
        // Transaction 1000, credited there to someone else.
        _ = try await target.record("intruder", Make.result(Make.renewals("1000", count: 1)), at: Make.t0)
        let before = try await Self.targetDigest(url)

        await #expect(throws: SQLiteImportError.conflict(in: ImportedTable.all[0])) {
            try await Self.runImport(sample.file, into: url)
        }
        #expect(try await Self.targetDigest(url) == before)
        #expect(try await target.owner("1000") == "intruder")
    }

    @Test func aTargetWhoseEventSeqsOverlapWithOtherEventsIsRefusedAndLeftAsItWas() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        let url = try await PostgresTestServer.shared().newDatabase()
        let target = try await LedgerFixture(on: PostgresLedgerStore.open(url: url, logger: Self.logger, readers: 1))
        // Purchases the SQLite ledger does not have: only their events' seqs meet the imported ones.
        for index in 0..<8 {
            _ = try await target.record(
                "other-\(index)", Make.result([Make.transaction("90\(index)", product: "com.example.coins100", purchased: Make.t0)]),
                at: Make.t0)
        }
        #expect(try await target.headSeq() >= sample.ledger.events().first?.seq ?? 0, "the seq ranges overlap")
        let before = try await Self.targetDigest(url)

        let events = try #require(ImportedTable.all.first { $0.name == "events" })
        await #expect(throws: SQLiteImportError.conflict(in: events)) { try await Self.runImport(sample.file, into: url) }
        #expect(try await Self.targetDigest(url) == before)
    }

    @Test func aTargetHoldingExtraRowsIsRolledBackWithTheDifferenceReported() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        let url = try await PostgresTestServer.shared().newDatabase()
        let store = try await PostgresLedgerStore.open(url: url, logger: Self.logger, readers: 1)
        let extra = StoredIdempotentAnswer(
            scope: String(repeating: "f", count: 64), key: "elsewhere", requestSHA256: String(repeating: "0", count: 64),
            outcome: [1, 2, 3], createdAtMs: Make.t0)
        _ = try await store.commit(units: 1) { _, session in try session.storeIdempotentAnswer(extra) }
        let before = try await Self.targetDigest(url)

        let report = try await Self.runImport(sample.file, into: url)
        #expect(!report.committed)
        #expect(report.tables.filter { !$0.matches }.map(\.name) == ["idempotency_keys"])
        let keys = try #require(report.tables.first { $0.name == "idempotency_keys" })
        #expect(keys.postgresRows == keys.sqliteRows + 1)
        #expect(try await Self.targetDigest(url) == before, "rolled back")
    }

    @Test func aLedgerRunningOnTheTargetIsRefused() async throws {
        let sample = try await SampleSQLiteLedger.make()
        defer { sample.remove() }
        let url = try await PostgresTestServer.shared().newDatabase()
        let numberer = try await NIOThreadPool.singleton.runIfActive {
            let db = try BlockingPostgresConnection.connect(url, logger: Self.logger)
            try db.query("SELECT pg_advisory_lock($1)", [.int(EventSequencer.leaderLock)])
            return db
        }
        await #expect(throws: SQLiteImportError.ledgerRunning) { try await Self.runImport(sample.file, into: url) }
        #expect(try await Self.targetDigest(url) == nil, "not even migrated")
        try await NIOThreadPool.singleton.runIfActive { numberer.close() }
    }

    /// What `--from-sqlite` may wrongly name.
    enum NotALedger: String, CaseIterable, CustomTestStringConvertible {
        case missingFile, emptyDirectory, textFile, otherSQLiteDatabase, olderLedgerSchema
        var testDescription: String { rawValue }

        /// Creates it in `directory`; returns the path to pass.
        func make(in directory: String) throws -> String {
            let path = directory + "/ledger.sqlite"
            switch self {
            case .missingFile: return directory + "/nothing-here.sqlite"
            case .emptyDirectory: return directory
            case .textFile: try String(repeating: "not a database\n", count: 500).write(toFile: path, atomically: true, encoding: .utf8)
            case .otherSQLiteDatabase:
                let queue = try DatabaseQueue(path: path)
                try queue.write { try $0.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)") }
                try queue.close()
            case .olderLedgerSchema:
                let queue = try DatabaseQueue(path: path)
                try LedgerSchema.migrator.migrate(queue, upTo: "v1")
                try queue.close()
            }
            return path
        }
    }

    @Test(arguments: NotALedger.allCases) func aPathThatIsNotALedgerIsRefusedAndNothingChanges(_ kind: NotALedger) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-not-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try kind.make(in: directory)
        let files = { try FileManager.default.contentsOfDirectory(atPath: directory).sorted() }
        let listed = try files()
        let bytes = FileManager.default.contents(atPath: path)
        let url = try await PostgresTestServer.shared().newDatabase()

        do {
            _ = try await Self.runImport(path, into: url)
            Issue.record("\(kind) was imported")
        } catch let error as SQLiteImportError {
            #expect(error.description.contains("is not a Storekeeper ledger"), "\(error)")
        }
        #expect(try files() == listed)
        #expect(FileManager.default.contents(atPath: path) == bytes)
        #expect(try await Self.targetDigest(url) == nil, "PostgreSQL not even migrated")
    }

    // MARK: Helpers

    /// Every read the rules and endpoints make, for every user and purchase of the sample, alike on both stores.
    static func expectSameReads(_ sqlite: any LedgerStore, _ postgres: any LedgerStore, rules: LedgerRules) async throws {
        @Sendable func both<T: Equatable & Sendable>(_ read: @escaping @Sendable (any LedgerReader) throws -> T) async throws -> (T, T) {
            (try await sqlite.read(read), try await postgres.read(read))
        }
        let now = SampleSQLiteLedger.now
        for user in SampleSQLiteLedger.users {
            let (entitlements, onPostgres) = try await both { try rules.entitlements(of: user, at: now, reader: $0).entitlements }
            #expect(entitlements == onPostgres, "\(user)'s entitlements")
            let credited = try await both { try $0.creditedTransactions(of: user, after: nil, limit: 100) }
            #expect(credited.0 == credited.1, "\(user)'s transactions")
            let subscriptions = try await both { try $0.subscriptions(ownedBy: user) }
            #expect(subscriptions.0 == subscriptions.1, "\(user)'s subscriptions")
        }
        let u1 = try await postgres.read { try rules.entitlements(of: "u-1", at: now, reader: $0).entitlements }
        #expect(Set(u1.map(\.productID)) == ["com.example.pro.monthly", "com.example.removeads"])
        for purchase in SampleSQLiteLedger.purchases {
            let transactions = try await both { try $0.transactions(of: purchase) }
            #expect(transactions.0 == transactions.1 && !transactions.0.isEmpty, "\(purchase.originalTransactionID)")
            let owner = try await both { try $0.owner(of: purchase) }
            #expect(owner.0 == owner.1, "owner of \(purchase.originalTransactionID)")
            let subscription = try await both { try $0.subscription(purchase) }
            #expect(subscription.0 == subscription.1, "subscription \(purchase.originalTransactionID)")
        }
        let events = try await both { try $0.events(after: 0, limit: 10_000) }
        #expect(events.0 == events.1 && !events.0.isEmpty, "every retained event, seq and bytes")
        let head = try await both { try $0.headSeq() }
        #expect(head.0 == head.1)
        let oldest = try await both { try $0.oldestRetainedSeq() }
        #expect(oldest.0 == oldest.1)
        let key = SampleSQLiteLedger.idempotencyKey
        let answer = try await both { try $0.idempotentAnswer(scope: key.scope, key: key.key) }
        #expect(answer.0 == answer.1 && answer.0 != nil, "the kept answer")
    }

    /// "table rows sha256" for every imported table as PostgreSQL holds it; nil without the ledger's schema.
    static func targetDigest(_ url: DatabaseURL) async throws -> [String]? {
        try await NIOThreadPool.singleton.runIfActive {
            let db = try BlockingPostgresConnection.connect(url, logger: Self.logger)
            defer { db.close() }
            let migrated = try db.query("SELECT to_regclass('schema_migrations') IS NOT NULL").rows.first?
                .makeRandomAccess().bool(0) ?? false
            guard migrated else { return nil }
            try db.query("BEGIN")
            defer { _ = try? db.query("COMMIT") }
            let target = PostgresImportTarget(db: db)
            return try ImportedTable.all.map { table in
                var checksum = TableChecksum()
                try target.rows(of: table) { checksum.add($0) }
                return "\(table.name) \(checksum.rows) \(checksum.finalize())"
            }
        }
    }

    /// A new database whose default collation is ICU's en-US (the test server's others are C).
    static func newDictionaryOrderedDatabase() async throws -> DatabaseURL {
        let server = try await PostgresTestServer.shared()
        let name = "dictionary_\(UInt64.random(in: 0...UInt64.max))"
        try await execute(
            server.url(database: "postgres"), "CREATE DATABASE \(name) TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'")
        return server.url(database: name)
    }

    /// The first column of each row `sql` returns.
    static func integers(_ url: DatabaseURL, _ sql: String) async throws -> [Int64] {
        try await NIOThreadPool.singleton.runIfActive {
            let db = try BlockingPostgresConnection.connect(url, logger: Self.logger)
            defer { db.close() }
            return try db.query(sql).rows.map { try $0.makeRandomAccess().int(0) }
        }
    }

    static func execute(_ url: DatabaseURL, _ sql: String) async throws {
        try await NIOThreadPool.singleton.runIfActive {
            let db = try BlockingPostgresConnection.connect(url, logger: Self.logger)
            defer { db.close() }
            try db.query(sql)
        }
    }
}
