import Contracts
import Foundation
import Logging
import ServiceLifecycle
import Timekeeping

/// The ledger's periodic work: `subscription.expired` events, event retention,
/// and refreshing subscriptions that lapsed while auto-renew was on (a
/// renewal notification may never come; `SubscriptionRefresh`), at most
/// `refreshPerMinute`.
final class LedgerMaintenance: Service, Sendable {
    static let sweepLimit = 500
    static let pruneEvery: Duration = .seconds(600)

    private let committer: GroupCommitter
    private let refresher: SubscriptionRefresh?
    private let interval: Duration
    private let retention: Duration
    private let refreshPerMinute: Int
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    init(
        committer: GroupCommitter, refresher: SubscriptionRefresh?, settings: LedgerMaintenanceSettings,
        clock: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.committer = committer
        self.refresher = refresher
        self.interval = settings.interval
        self.retention = settings.retention
        self.refreshPerMinute = settings.refreshPerMinute
        self.clock = clock
        self.logger = logger
    }

    func run() async throws {
        // Ends with graceful shutdown: the sleep is cancelled.
        await cancelWhenGracefulShutdown {
            var lastPrune: ContinuousClock.Instant?
            while !Task.isCancelled {
                await self.sweep()
                if lastPrune.map({ ContinuousClock.now - $0 >= Self.pruneEvery }) ?? true {
                    lastPrune = .now
                    await self.prune()
                }
                await self.refresh()
                try? await Task.sleep(for: self.interval)
            }
        }
    }

    private func sweep() async {
        do {
            _ = try await committer.submit(.sweepExpired(limit: Self.sweepLimit), requestID: "sweep")
        } catch {
            logger.warning("expiry sweep failed", metadata: ["error": "\(loggable(error))"])
        }
    }

    private func prune() async {
        let cutoff = clock() - retention.milliseconds
        do {
            if case .count(let pruned) = try await committer.submit(.pruneEvents(before: cutoff), requestID: "retention"),
                pruned > 0
            {
                logger.info("events past retention pruned", metadata: ["ledger.events_pruned": "\(pruned)"])
            }
        } catch {
            logger.warning("event pruning failed", metadata: ["error": "\(loggable(error))"])
        }
        do {
            let idempotencyCutoff = clock() - IdempotencyRule.retentionMs
            if case .count(let pruned) = try await committer.submit(
                .pruneIdempotentAnswers(before: idempotencyCutoff), requestID: "retention"),
                pruned > 0
            {
                logger.info("idempotent answers past 24 hours pruned", metadata: ["ledger.answers_pruned": "\(pruned)"])
            }
        } catch {
            logger.warning("idempotent answer pruning failed", metadata: ["error": "\(loggable(error))"])
        }
    }

    /// The budget for one sweep interval, at least one when refresh is on.
    var refreshBudget: Int {
        guard refreshPerMinute > 0 else { return 0 }
        let perInterval = Double(refreshPerMinute) * Double(interval.nanoseconds) / 60e9
        return max(1, Int(perInterval.rounded(.down)))
    }

    private func refresh() async {
        guard let refresher, refreshBudget > 0, refresher.pool.workerCount > 0 else { return }
        let claimed: [OwnedSubscription]
        do {
            // Subscriptions with no receipt (StoreKit 2) too, unless the verifiers said lately they have
            // no Server API key: nothing else can refresh those.
            let work = LedgerWork.claimRefreshes(limit: refreshBudget, withoutReceipt: refresher.serverAPI.shouldAsk)
            guard case .claimed(let due) = try await committer.submit(work, requestID: "refresh") else { return }
            claimed = due
        } catch {
            logger.warning("refresh claim failed", metadata: ["error": "\(loggable(error))"])
            return
        }
        await withDiscardingTaskGroup { group in
            for owned in claimed {
                group.addTask { await refresher.refresh(owned) }
            }
        }
    }
}

/// What the maintenance loop is configured with.
struct LedgerMaintenanceSettings: Sendable {
    var interval: Duration
    var retention: Duration
    var refreshPerMinute: Int
}
