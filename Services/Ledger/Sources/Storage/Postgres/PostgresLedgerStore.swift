import Contracts
import Foundation
import Logging
import NIOPosix
import StorekeeperCore
import Synchronization

/// The PostgreSQL `LedgerStore`, for several ledgers sharing one database.
///
/// Each group commit is one REPEATABLE READ transaction, each unit in a
/// savepoint. Every rule reads and then writes the very rows its invariant is
/// about (one row per transaction, binding, subscription, notification,
/// idempotency key), so snapshot isolation makes the rules hold across
/// ledgers: two ledgers changing the same row, or inserting the same key,
/// cannot both commit; the loser gets a serialization failure and its whole
/// group runs again on fresh data. Events are written unnumbered and numbered
/// by the one `EventSequencer`, so writers share no hot row.
///
/// Statements block on a thread of a `NIOThreadPool` (the rules are
/// synchronous): a thread and a connection per group in flight, a few for reads.
/// Two groups at once: while one waits for PostgreSQL, the rules of the other
/// run, and PostgreSQL works on both (one ledger went from 8,400 to ... recorded
/// transactions/s, bench/README).
public final class PostgresLedgerStore: LedgerStore, Sendable {
    /// Group commits tried before the batch fails (retryable) under constant contention.
    static let maxAttempts = 12
    static let eventsChannel = "storekeeper_events"
    static let writerLanes = 2

    let url: DatabaseURL
    private let logger: Logger
    private let writerThreads: NIOThreadPool
    private let readerThreads: NIOThreadPool
    private let idleWriters = Mutex<[BlockingPostgresConnection]>([])
    private let idleReaders = Mutex<[BlockingPostgresConnection]>([])
    private let onEventsCommitted = Mutex<(@Sendable () -> Void)?>(nil)
    private let metrics = LedgerMetrics()

    private init(url: DatabaseURL, logger: Logger, readers: Int) {
        self.url = url
        self.logger = logger
        writerThreads = NIOThreadPool(numberOfThreads: Self.writerLanes)
        readerThreads = NIOThreadPool(numberOfThreads: readers)
        writerThreads.start()
        readerThreads.start()
    }

    deinit {
        // The connections close themselves (BlockingPostgresConnection's deinit).
        writerThreads.shutdownGracefully { _ in }
        readerThreads.shutdownGracefully { _ in }
    }

    /// Connects and applies the migrations; throws when PostgreSQL cannot be reached.
    public static func open(url: DatabaseURL, logger: Logger, readers: Int = 4) async throws -> PostgresLedgerStore {
        try await migrate(url: url, logger: logger)
        return PostgresLedgerStore(url: url, logger: logger, readers: readers)
    }

    /// Applies the migrations not yet applied (`storekeeper db migrate`); returns their names.
    @discardableResult
    public static func migrate(url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await NIOThreadPool.singleton.runIfActive {
            let db = try BlockingPostgresConnection.connect(url, logger: logger)
            defer { db.close() }
            return try PostgresSchema.migrate(db, logger: logger)
        }
    }

    /// Opens the store, retrying with back-off (up to 5 s apart) while PostgreSQL
    /// is unreachable: the ledger answers nothing, so gateways report not ready.
    public static func openRetrying(url: DatabaseURL, logger: Logger) async throws -> PostgresLedgerStore {
        var delay = Duration.milliseconds(200)
        while true {
            do {
                return try await open(url: url, logger: logger)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning(
                    "PostgreSQL unreachable; retrying",
                    metadata: ["db.url": "\(url)", "retry.in": "\(delay)", "error": "\(loggable(error))"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Called after each commit that wrote events (the sequencer in this process numbers them at once).
    public var concurrentCommits: Int { Self.writerLanes }

    public func whenEventsCommitted(_ action: @escaping @Sendable () -> Void) {
        onEventsCommitted.withLock { $0 = action }
    }

    public func commit<Output: Sendable>(
        units: Int, prefetch: LedgerPrefetch,
        _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) async throws -> [UnitOutcome<Output>] {
        let (outcomes, wroteEvents) = try await writerThreads.runIfActive {
            try self.commitRetrying(units: units, prefetch: prefetch, apply)
        }
        if wroteEvents { onEventsCommitted.withLock { $0 }?() }
        return outcomes
    }

    /// The group in one transaction; when another ledger held the same rows (or
    /// PostgreSQL refused a statement), each unit in a transaction of its own (a
    /// group re-run whole would keep meeting the other ledger's group), each
    /// re-run on conflict with a jittered pause.
    private func commitRetrying<Output: Sendable>(
        units: Int, prefetch: LedgerPrefetch, _ apply: (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> ([UnitOutcome<Output>], Bool) {
        do {
            return try commitWithRetries(attempts: 1) { db in try commitOnce(db, units: 0..<units, prefetch: prefetch, apply) }
        } catch is Conflict {
            // Unit by unit below.
        } catch where units > 1 && PostgresFailureKind(error) == .other && PostgresFailureKind.isDatabaseError(error) {
            // The unit whose statement PostgreSQL refused fails alone, below.
        }
        var outcomes: [UnitOutcome<Output>] = []
        var wroteEvents = false
        for unit in 0..<units {
            // Each unit's own answer: the ones before it are committed whatever happens to it.
            do {
                let (unitOutcomes, wrote) = try commitWithRetries(attempts: Self.maxAttempts) { db in
                    try commitOnce(db, units: unit..<unit + 1, prefetch: LedgerPrefetch(), apply)
                }
                outcomes += unitOutcomes
                wroteEvents = wroteEvents || wrote
            } catch {
                outcomes.append(UnitOutcome(result: .failure(error), events: []))
            }
        }
        return (outcomes, wroteEvents)
    }

    /// Serialization failures past the attempts allowed.
    private struct Conflict: Error {}

    private func commitWithRetries<Result>(
        attempts: Int, _ body: (BlockingPostgresConnection) throws -> Result
    ) throws -> Result {
        var attempt = 1
        while true {
            let db = try takeWriter()
            do {
                let result = try body(db)
                idleWriters.withLock { $0.append(db) }
                return result
            } catch {
                _ = try? db.query("ROLLBACK")
                switch PostgresFailureKind(error) {
                case .conflict:
                    idleWriters.withLock { $0.append(db) }
                    metrics.serializationRetry()
                    guard attempt < attempts else { throw attempts == 1 ? Conflict() : error }
                    // Another group holds the same rows: step aside a random while, then run again.
                    usleep(UInt32.random(in: 0...UInt32(min(50_000, 500 << attempt))))
                    attempt += 1
                case .connectionLost:
                    db.close()
                    throw error
                case .other:
                    idleWriters.withLock { $0.append(db) }
                    throw error
                }
            }
        }
    }

    /// Runs the units over a `PostgresGroupSession` (reads prefetched, writes
    /// sent together at the end) and commits.
    private func commitOnce<Output: Sendable>(
        _ db: BlockingPostgresConnection, units: Range<Int>, prefetch: LedgerPrefetch,
        _ apply: (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> ([UnitOutcome<Output>], Bool) {
        try db.query("BEGIN ISOLATION LEVEL REPEATABLE READ")
        let session = PostgresGroupSession(db: db)
        try session.prefetch(prefetch)
        var outcomes: [UnitOutcome<Output>] = []
        outcomes.reserveCapacity(units.count)
        for unit in units {
            session.beginUnit()
            do {
                let output = try apply(unit, session)
                try session.endUnit()
                outcomes.append(UnitOutcome(result: .success(output), events: []))
            } catch {
                // A rule's refusal ends its unit. A failure of PostgreSQL ends the group: the transaction
                // is aborted, unless the unit holds a savepoint and the failure was the statement's own.
                if PostgresFailureKind.isDatabaseError(error),
                    !session.unitHoldsSavepoint || PostgresFailureKind(error) != .other
                {
                    throw error
                }
                try session.abandonUnit()
                outcomes.append(UnitOutcome(result: .failure(error), events: []))
            }
        }
        try session.finish()
        // Wakes the sequencer of every ledger (only the elected one acts), delivered at commit.
        if session.wroteEvents { try db.query("SELECT pg_notify($1, '')", [.text(Self.eventsChannel)]) }
        try db.query("COMMIT")
        return (outcomes, session.wroteEvents)
    }

    /// An idle writer connection, or a new one; the caller gives it back unless it failed.
    private func takeWriter() throws -> BlockingPostgresConnection {
        while let db = idleWriters.withLock({ $0.popLast() }) {
            if !db.isClosed { return db }
        }
        let db = try BlockingPostgresConnection.connect(url, logger: logger)
        try Self.preferIndexProbes(db)
        return db
    }

    /// For the connections of the writers and the sequencer, whose statements name their rows by
    /// key (a few thousand at most): an index probe per key is their plan at any table size.
    /// PostgreSQL's costs (random_page_cost 4, for disks) preferred hashing the whole table, in
    /// parallel workers, once it held some 30,000 rows: 60-80 ms a statement instead of a few
    /// (auto_explain, bench/README).
    static func preferIndexProbes(_ db: BlockingPostgresConnection) throws {
        for setting in ["enable_hashjoin = off", "enable_mergejoin = off", "max_parallel_workers_per_gather = 0"] {
            try db.query("SET \(setting)")
        }
    }

    public func read<Output: Sendable>(_ body: @escaping @Sendable (any LedgerReader) throws -> Output) async throws -> Output {
        try await readerThreads.runIfActive {
            let db = try self.idleReaders.withLock { $0.popLast() }.flatMap { $0.isClosed ? nil : $0 }
                ?? BlockingPostgresConnection.connect(self.url, logger: self.logger)
            do {
                try db.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                let output = try body(PostgresLedgerSession(db: db))
                try db.query("COMMIT")
                self.idleReaders.withLock { $0.append(db) }
                return output
            } catch {
                if PostgresFailureKind(error) == .connectionLost {
                    db.close()
                } else {
                    _ = try? db.query("ROLLBACK")
                    self.idleReaders.withLock { $0.append(db) }
                }
                throw error
            }
        }
    }

    /// Numbers the events committed so far, as the elected sequencer does, on the
    /// writer's connection (tests of the rules, which run no sequencer).
    func numberPendingEvents() async throws {
        _ = try await writerThreads.runIfActive {
            let db = try self.takeWriter()
            defer { self.idleWriters.withLock { $0.append(db) } }
            let head = try db.query("SELECT COALESCE(MAX(seq), 0) FROM events").rows.first?.makeRandomAccess().int(0) ?? 0
            return try EventSequencer.number(db, after: UInt64(head)).1
        }
    }
}
