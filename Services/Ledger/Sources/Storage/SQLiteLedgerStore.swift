import Contracts
import Foundation
import GRDB

/// The SQLite `LedgerStore`: one GRDB `DatabasePool` in WAL mode with
/// `synchronous=FULL`, so a committed group is on disk (it survives a power
/// loss, not only a process kill) before any of its answers goes out.
public final class SQLiteLedgerStore: BlockingLedgerStore {
    public static let fileName = "ledger.sqlite"

    let writer: any DatabaseWriter
    /// The writer connection's statements, held from one group to the next.
    let writerStatements = PreparedStatements()

    private init(writer: any DatabaseWriter) throws {
        self.writer = writer
        try LedgerSchema.migrator.migrate(writer)
    }

    /// Opens (creating when needed) the database in `directory`.
    public static func open(directory: String) throws -> SQLiteLedgerStore {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // A group in which a unit failed runs again with a savepoint per unit (`applyGroup`).
        // SQLite then copies every page a unit changes (10-15 of 4 KiB) into a statement
        // journal that it holds in memory only up to 64 KiB, then spills to a temporary file:
        // when every group ran so, about 12 pwrite calls per verification at 64 in flight
        // (strace), more than the WAL's. Kept in memory, a journal holds one unit's pages:
        // it is emptied at each RELEASE.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
        let path = URL(fileURLWithPath: directory).appendingPathComponent(fileName).path
        let pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB turns WAL on with synchronous=NORMAL (a commit may be lost to a
        // power cut); the ledger answers only what is on disk, so its one writer
        // connection syncs every commit. Not in `prepareDatabase`: DatabasePool
        // sets WAL up (and NORMAL with it) on the writer after prepareDatabase
        // has run, so FULL set there does not last (LedgerStoreTests checks).
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        return try SQLiteLedgerStore(writer: pool)
    }

    /// A private in-memory database, for tests of the rules.
    public static func inMemory() throws -> SQLiteLedgerStore {
        try SQLiteLedgerStore(writer: DatabaseQueue())
    }

    /// Reads are local and cheap: the prefetch hint is not needed.
    public func commit<Output: Sendable>(
        units: Int, prefetch: LedgerPrefetch, _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) async throws -> [UnitOutcome<Output>] {
        do {
            return try await writer.writeWithoutTransaction { [writerStatements] db in
                try Self.applyGroup(db, statements: writerStatements, units: units, apply)
            }
        } catch let failure as LoneUnitFailed {
            return [failure.outcome()]
        }
    }

    public func commitBlocking<Output: Sendable>(
        units: Int, _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> [UnitOutcome<Output>] {
        do {
            return try writer.writeWithoutTransaction { db in
                try Self.applyGroup(db, statements: writerStatements, units: units, apply)
            }
        } catch let failure as LoneUnitFailed {
            return [failure.outcome()]
        }
    }

    /// The group's units, in one transaction.
    ///
    /// The units are first applied one after the other with no savepoint: a
    /// unit's savepoint makes SQLite copy every page the unit changes into a
    /// statement journal (10-15 pages of 4 KiB), and SAVEPOINT with RELEASE cost
    /// about 9,000 instructions more. Units rarely fail (a bad value, or
    /// `already_bound` under the `keep` policy). When one does, that transaction
    /// is rolled back whole. A unit alone in its group then has its outcome
    /// (`LoneUnitFailed`); a larger group runs again with a savepoint per unit,
    /// which undoes the failed unit's changes alone. The rules read and write only
    /// the database, so running a unit twice, the first time undone, changes nothing.
    private static func applyGroup<Output: Sendable>(
        _ db: Database, statements: PreparedStatements, units: Int,
        _ apply: (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> [UnitOutcome<Output>] {
        let session = SQLiteLedgerSession(db: db, statements: statements)
        do {
            return try inGroupTransaction(session) { try applyUnitsTogether(session, units: units, apply) }
        } catch is AUnitFailedTogether {
            // Rolled back: each unit again, in a savepoint of its own.
            return try inGroupTransaction(session) { try applyUnitsInSavepoints(session, units: units, apply) }
        }
    }

    /// Every unit applied in the transaction as it stands, with no savepoint; the first
    /// unit that fails ends the attempt, to be rolled back (`LoneUnitFailed` for a unit
    /// alone in its group, else `AUnitFailedTogether`).
    private static func applyUnitsTogether<Output: Sendable>(
        _ session: SQLiteLedgerSession, units: Int, _ apply: (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> [UnitOutcome<Output>] {
        session.nextSeq = try session.headSeq() + 1
        var outcomes: [UnitOutcome<Output>] = []
        outcomes.reserveCapacity(units)
        for unit in 0..<units {
            session.appended.removeAll(keepingCapacity: true)
            let output: Output
            do {
                output = try apply(unit, session)
            } catch {
                throw units == 1 ? LoneUnitFailed(error: error) : AUnitFailedTogether()
            }
            outcomes.append(UnitOutcome(result: .success(output), events: session.appended))
        }
        return outcomes
    }

    /// A unit failed while a group's units ran together: the group runs again, each unit in a savepoint.
    struct AUnitFailedTogether: Error {}

    /// The group's transaction, begun and committed with the session's prepared statements:
    /// GRDB's `write` builds and prepares its BEGIN and COMMIT anew for every group, about
    /// 20,000 instructions (callgrind). As in `write`, a failure rolls the transaction back
    /// and is thrown; when the rollback fails too, its error is thrown instead (the
    /// connection's state is then unknown, and no unit's outcome may be trusted).
    static func inGroupTransaction<T>(_ session: SQLiteLedgerSession, _ body: () throws -> T) throws -> T {
        try session.cached(.begin, "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            let result = try body()
            try session.cached(.commit, "COMMIT TRANSACTION").execute()
            return result
        } catch {
            if session.db.isInsideTransaction { try session.db.rollback() }
            throw error
        }
    }

    /// Each unit in a savepoint of its own: one request's failure (already_bound, a bad
    /// value) undoes its own changes only.
    private static func applyUnitsInSavepoints<Output: Sendable>(
        _ session: SQLiteLedgerSession, units: Int, _ apply: (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> [UnitOutcome<Output>] {
        session.nextSeq = try session.headSeq() + 1
        var outcomes: [UnitOutcome<Output>] = []
        outcomes.reserveCapacity(units)
        for unit in 0..<units {
            let firstSeq = session.nextSeq
            session.appended.removeAll(keepingCapacity: true)
            var result: Result<Output, any Error>?
            var events: [CommittedEvent] = []
            do {
                try inUnitSavepoint(session) { result = .success(try apply(unit, session)) }
                events = session.appended
            } catch let failure as UnitNotUndone {
                // Its writes would be committed with the others': the whole group fails instead.
                throw failure.error
            } catch {
                result = .failure(error)
                session.nextSeq = firstSeq
            }
            outcomes.append(UnitOutcome(result: result ?? .failure(CancellationError()), events: events))
        }
        return outcomes
    }

    /// A savepoint from the session's prepared statements. GRDB's `inSavepoint` prepares its
    /// SAVEPOINT and RELEASE anew each time: about 37,000 instructions a unit under callgrind, a
    /// twentieth of the ledger's whole cost per verification. The group's transaction is open
    /// (`inGroupTransaction`), so this is always a nested savepoint, never the top level GRDB guards against.
    /// A unit that fails, its RELEASE included, is rolled back to the savepoint; when that
    /// fails too, `UnitNotUndone` says so, and the caller fails the whole group.
    static func inUnitSavepoint(_ session: SQLiteLedgerSession, _ body: () throws -> Void) throws {
        try session.cached(.savepoint, "SAVEPOINT unit").execute()
        do {
            try body()
            try session.cached(.releaseSavepoint, "RELEASE SAVEPOINT unit").execute()
        } catch {
            do {
                try session.cached(.rollbackToSavepoint, "ROLLBACK TO SAVEPOINT unit").execute()
                try session.cached(.releaseSavepoint, "RELEASE SAVEPOINT unit").execute()
            } catch {
                throw UnitNotUndone(error: error)
            }
            throw error
        }
    }

    /// A unit's writes could not be rolled back to its savepoint.
    struct UnitNotUndone: Error {
        let error: any Error
    }

    /// The one unit of a group failed: thrown so that its transaction is rolled back.
    struct LoneUnitFailed: Error {
        let error: any Error

        func outcome<Output: Sendable>() -> UnitOutcome<Output> { UnitOutcome(result: .failure(error), events: []) }
    }

    public func read<Output: Sendable>(_ body: @escaping @Sendable (any LedgerReader) throws -> Output) async throws -> Output {
        try await writer.read { db in try body(SQLiteLedgerSession(db: db)) }
    }

    /// An integer pragma's value on the writer connection (`synchronous` 2 is FULL); -1 when it has none.
    func pragma(_ name: String) async throws -> Int {
        try await writer.write { db in try Int.fetchOne(db, sql: "PRAGMA \(name)") ?? -1 }
    }
}
