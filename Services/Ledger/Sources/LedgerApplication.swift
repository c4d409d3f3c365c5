import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import Timekeeping
import VerifierPool
import ZeroMQ

/// Builds the services of `storekeeper-ledger`, the only owner of the database.
public enum LedgerApplication {
    public static let executableName = "storekeeper-ledger"
    static let replayBatchLimit = 1_000

    /// `STOREKEEPER_CATALOG`, read and checked (also before start-up, so a bad file exits 78).
    public static func catalog(_ settings: LedgerSettings) throws(ConfigurationError) -> ProductCatalog? {
        try settings.catalogPath.map { path throws(ConfigurationError) in try CatalogFile.load(path: path) }
    }

    /// The services to run, in start order (stopped in reverse: the endpoints
    /// close first, then the writer finishes what it holds, then the publisher).
    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        let settings = context.configuration.ledger
        let endpoints = context.configuration.endpoints
        let logger = context.logger
        let clock = WallClock.system.now
        let zmq = ZMQContext()
        let rules = LedgerRules(policy: settings.bindingPolicy, catalog: try catalog(settings))
        let store: any LedgerStore
        let publish: @Sendable ([CommittedEvent]) -> Void
        var publisher: EventPublisher?
        if let url = settings.databaseURL {
            store = try await PostgresLedgerStore.openRetrying(url: url, logger: logger)
            // The elected sequencer numbers and publishes every ledger's events; writers publish nothing.
            publish = { _ in }
        } else {
            store = try SQLiteLedgerStore.open(directory: settings.dataDirectory)
            let made = EventPublisher(context: zmq, endpoint: endpoints.events, logger: logger)
            publish = made.publish
            publisher = made
        }
        let committer = GroupCommitter(store: store, rules: rules, clock: clock, logger: logger, publish: publish)
        let handler = LedgerRequestHandler(
            committer: committer, store: store, view: rules.view, clock: clock, logger: logger,
            replayBatchLimit: replayBatchLimit)
        let requests = EnvelopeServer(context: zmq, endpoint: endpoints.ledger, logger: logger, handler: handler.handle)
        // The event stream: on SQLite this ledger's publisher and replay server; on PostgreSQL the
        // sequencer, which binds both only while this ledger is the elected one.
        let events: [any Service]
        if let postgres = store as? PostgresLedgerStore {
            let sequencer = EventSequencer(
                url: postgres.url, context: zmq,
                settings: .init(eventsEndpoint: endpoints.events, replayEndpoint: endpoints.replay), logger: logger,
                replayHandler: handler.handle)
            postgres.whenEventsCommitted { sequencer.wake() }
            events = [sequencer]
        } else {
            events = [publisher].compactMap { $0 }
        }
        let replay: [any Service] =
            publisher == nil
            ? [] : [EnvelopeServer(context: zmq, endpoint: endpoints.replay, logger: logger, handler: handler.handle)]
        let refreshPool =
            settings.refreshPerMinute > 0
            ? VerifierPoolClient(context: zmq, endpoint: endpoints.refresh, logger: logger) : nil
        let maintenance = LedgerMaintenance(
            committer: committer, refreshPool: refreshPool,
            settings: .init(
                interval: settings.sweepInterval, retention: settings.eventRetention,
                refreshPerMinute: settings.refreshPerMinute),
            clock: clock, logger: logger)
        logger.info(
            "ledger configured",
            metadata: [
                "ledger.store": "\(settings.databaseURL.map { "\($0)" } ?? settings.dataDirectory)",
                "ledger.binding_policy": "\(settings.bindingPolicy)",
                "ledger.endpoint": "\(endpoints.ledger)", "ledger.events_endpoint": "\(endpoints.events)",
                "ledger.replay_endpoint": "\(endpoints.replay)",
            ])
        return events + [committer] + (refreshPool.map { [$0] } ?? []) + [requests] + replay + [maintenance]
    }
}
