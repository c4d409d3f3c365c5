import Contracts
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import RequestReply
import ServiceLifecycle
import StorekeeperCore
import ZeroMQ

/// The one numberer and publisher of the event stream when several ledgers
/// share PostgreSQL.
///
/// Writers commit events unnumbered. PostgreSQL sequences do not commit in
/// order, so a reader trusting them could skip a row committed late; instead,
/// one ledger, elected by a session advisory lock, numbers the rows it sees
/// committed (seq = head + 1, head + 2, ... in one transaction on the lock's
/// own connection), then publishes them on the events endpoint in that order.
/// A row committed late is simply numbered in the next round: `seq` is gapless
/// and in the order rows became visible, and no two ledgers ever number at
/// once (the lock, and `seq`'s unique constraint behind it).
///
/// Only the elected ledger binds the events and replay endpoints, so a
/// subscriber needs one pair of endpoints whatever the number of ledgers. When
/// it dies, its connection (and lock) go with it; another ledger wins the lock
/// within `campaignInterval`, binds the same endpoints and numbers on from the
/// stored head. Subscribers see a jump in seq if the dead one numbered events it
/// never sent, and catch up through replay, as after any lost message.
final class EventSequencer: Service, Sendable {
    static let leaderLock: Int64 = 0x5354_4B50_4556_4E54  // "STKPEVNT"
    static let batchLimit = 5_000

    struct Settings: Sendable {
        var eventsEndpoint: String
        var replayEndpoint: String
        var campaignInterval: Duration = .seconds(1)
        /// How often the leader looks for rows even when nobody woke it (a lost notification).
        var pollInterval: Duration = .milliseconds(250)
    }

    private let url: DatabaseURL
    private let settings: Settings
    private let logger: Logger
    private let replayHandler: EnvelopeServer.Handler
    private let context: ZMQContext
    private let thread = NIOThreadPool(numberOfThreads: 1)
    private let doorbell = Doorbell()

    init(
        url: DatabaseURL, context: ZMQContext, settings: Settings, logger: Logger,
        replayHandler: @escaping EnvelopeServer.Handler
    ) {
        self.url = url
        self.context = context
        self.settings = settings
        self.logger = logger
        self.replayHandler = replayHandler
        thread.start()
    }

    deinit { thread.shutdownGracefully { _ in } }

    /// Events were committed: number them now rather than at the next poll.
    func wake() { doorbell.ring() }

    func run() async throws {
        try await runUntilGracefulShutdown { group in
            group.addTask { try await endingQuietlyOnCancellation { try await self.campaign() } }
        }
    }

    private func campaign() async throws {
        while true {
            do {
                let db = try await thread.runIfActive { () -> BlockingPostgresConnection? in
                    let db = try BlockingPostgresConnection.connect(self.url, logger: self.logger)
                    let won = try db.query("SELECT pg_try_advisory_lock($1)", [.int(Self.leaderLock)])
                        .rows.first?.makeRandomAccess().bool(0) ?? false
                    if won {
                        try PostgresLedgerStore.preferIndexProbes(db)
                        return db
                    }
                    db.close()
                    return nil
                }
                if let db {
                    defer { db.close() }
                    try await lead(db)
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning("event sequencer stepped down", metadata: ["error": "\(loggable(error))"])
            }
            try await Task.sleep(for: settings.campaignInterval)
        }
    }

    /// Numbers and publishes until the connection fails or the task is cancelled.
    private func lead(_ db: BlockingPostgresConnection) async throws {
        let listener = db.connection.addListener(channel: PostgresLedgerStore.eventsChannel) { [weak self] _, _ in
            self?.wake()
        }
        defer { listener.stop() }
        _ = try await thread.runIfActive { try db.query("LISTEN \(PostgresLedgerStore.eventsChannel)") }
        let startHead = try await thread.runIfActive {
            UInt64(try db.query("SELECT COALESCE(MAX(seq), 0) FROM events").rows.first?.makeRandomAccess().int(0) ?? 0)
        }
        let publisher = EventPublisher(context: context, endpoint: settings.eventsEndpoint, logger: logger)
        let replay = EnvelopeServer(
            context: context, endpoint: settings.replayEndpoint, logger: logger, handler: replayHandler)
        logger.info("event sequencer elected", metadata: ["ledger.head_seq": "\(startHead)"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await publisher.run() }
            group.addTask { try await replay.run() }
            group.addTask {
                var head = startHead
                var statistics = TableStatistics(analyzedAtHead: startHead)
                // The thread pool and the doorbell return at once when cancelled: the check ends the term.
                while !Task.isCancelled {
                    let after = head
                    let (events, newHead) = try await self.thread.runIfActive { try Self.number(db, after: after) }
                    head = newHead
                    if !events.isEmpty { publisher.publish(events) }
                    if statistics.due(at: head) {
                        _ = try await self.thread.runIfActive { try db.query("ANALYZE \(TableStatistics.tables)") }
                        statistics.analyzedAtHead = head
                    }
                    // A full batch: more are waiting.
                    if events.count == Self.batchLimit { continue }
                    await self.doorbell.wait(upTo: self.settings.pollInterval)
                }
                throw CancellationError()
            }
            // The first to end (the connection failed, a socket could not bind) ends the term.
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Numbers the unnumbered rows visible now, after `head`, oldest id first;
    /// gives each granted transaction its `granted_seq`; returns the events in seq order.
    static func number(_ db: BlockingPostgresConnection, after head: UInt64) throws -> ([CommittedEvent], UInt64) {
        try db.query("BEGIN")
        do {
            let rows = try db.query(
                """
                WITH pending AS (SELECT id FROM events WHERE seq IS NULL ORDER BY id LIMIT $2 FOR UPDATE),
                numbered AS (SELECT id, $1::bigint + row_number() OVER (ORDER BY id) AS seq FROM pending)
                UPDATE events e SET seq = n.seq FROM numbered n WHERE e.id = n.id RETURNING e.seq, e.event
                """, [.int(Int64(head)), .int(Int64(batchLimit))]
            ).rows
            guard !rows.isEmpty else {
                try db.query("COMMIT")
                return ([], head)
            }
            let newHead = head + UInt64(rows.count)
            try db.query(
                """
                UPDATE transactions t SET granted_seq = e.seq FROM events e
                WHERE e.seq > $1 AND e.seq <= $2 AND e.granted_transaction_id IS NOT NULL
                    AND t.environment = e.granted_environment AND t.transaction_id = e.granted_transaction_id
                """, [.int(Int64(head)), .int(Int64(newHead))])
            try db.query("COMMIT")
            var events: [CommittedEvent] = []
            events.reserveCapacity(rows.count)
            for row in rows {
                let row = row.makeRandomAccess()
                var event = try LedgerEvent(serializedBytes: try row.bytes(1))
                event.seq = UInt64(try row.int(0))
                events.append(CommittedEvent(event: event, bytes: try event.serializedBytes()))
            }
            events.sort { $0.event.seq < $1.event.seq }
            return (events, newHead)
        } catch {
            _ = try? db.query("ROLLBACK")
            throw error
        }
    }
}
