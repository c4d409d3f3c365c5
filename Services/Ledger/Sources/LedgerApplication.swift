import Contracts
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
        let rules = LedgerRules(
            policy: settings.bindingPolicy, catalog: try catalog(settings), sendsConsumptionInfo: settings.sendConsumptionInfo)
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
        let requests = EnvelopeServer(context: zmq, endpoint: endpoints.ledger, logger: logger, handler: handler.handle(_:reply:))
        // The event stream: on SQLite this ledger's publisher and replay server; on PostgreSQL the
        // sequencer, which binds both only while this ledger is the elected one.
        let events: [any Service]
        if let postgres = store as? PostgresLedgerStore {
            let sequencer = EventSequencer(
                url: postgres.url, context: zmq,
                settings: .init(eventsEndpoint: endpoints.events, replayEndpoint: endpoints.replay), logger: logger,
                replayHandler: handler.handle(_:reply:))
            postgres.whenEventsCommitted { sequencer.wake() }
            events = [sequencer]
        } else {
            events = [publisher].compactMap { $0 }
        }
        let replay: [any Service] =
            publisher == nil
            ? [] : [EnvelopeServer(context: zmq, endpoint: endpoints.replay, logger: logger, handler: handler.handle(_:reply:))]
        // The ledger's own verifier pool: refreshes, the notification catch-up and consumption
        // information (the verifiers hold the App Store Server API key). Bound when one of the
        // first two is on: `storekeeper up` turns both off on all ledgers but the first.
        let refreshPool =
            settings.refreshPerMinute > 0 || settings.notificationCatchUp != nil
            ? VerifierPoolClient(context: zmq, endpoint: endpoints.refresh, logger: logger) : nil
        let serverAPI = refreshPool.map { LedgerServerAPI(pool: $0, clock: clock) }
        let refresher =
            settings.refreshPerMinute > 0
            ? serverAPI.map { SubscriptionRefresh(committer: committer, serverAPI: $0, clock: clock, logger: logger) } : nil
        let serverAPIWork = serverAPIServices(serverAPI, committer: committer, context: context, clock: clock)
        let maintenance = LedgerMaintenance(
            committer: committer, refresher: refresher,
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
                "ledger.notification_catchup": "\(settings.notificationCatchUp.map { "\($0)" } ?? "off")",
                "ledger.send_consumption_info": "\(settings.sendConsumptionInfo)",
            ])
        return events + [committer] + (refreshPool.map { [$0] } ?? []) + [requests] + replay + [maintenance] + serverAPIWork
    }

    /// The notification catch-up and the consumption information sender, when on and the pool is there.
    private static func serverAPIServices(
        _ serverAPI: LedgerServerAPI?, committer: GroupCommitter, context: ProcessLauncher.Context,
        clock: @escaping @Sendable () -> Int64
    ) -> [any Service] {
        let settings = context.configuration.ledger
        guard let serverAPI else {
            if settings.sendConsumptionInfo {
                context.logger.warning(
                    "STOREKEEPER_SEND_CONSUMPTION_INFO is on but this ledger has no verifier pool (refresh and catch-up are off): another ledger must send what it queues")
            }
            return []
        }
        var services: [any Service] = []
        if let period = settings.notificationCatchUp {
            let environments: [AppleEnvironment] =
                context.configuration.apple.acceptSandbox ? [.production, .sandbox] : [.production]
            services.append(
                NotificationCatchUp(
                    committer: committer, serverAPI: serverAPI, environments: environments, period: period,
                    holder: NotificationCatchUp.holder(sharedStore: context.configuration.ledger.databaseURL != nil),
                    clock: clock, logger: context.logger))
        }
        if settings.sendConsumptionInfo {
            services.append(
                ConsumptionSender(
                    committer: committer, serverAPI: serverAPI, interval: settings.sweepInterval, logger: context.logger))
        }
        return services
    }
}
