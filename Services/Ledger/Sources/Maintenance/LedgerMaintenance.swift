import Contracts
import Foundation
import Logging
import ServiceLifecycle
import Timekeeping
import VerifierPool

/// The ledger's periodic work: `subscription.expired` events, event retention,
/// and refreshing subscriptions that lapsed while auto-renew was on (a
/// renewal notification may never come), at most `refreshPerMinute`.
final class LedgerMaintenance: Service, Sendable {
    static let sweepLimit = 500
    static let pruneEvery: Duration = .seconds(600)
    /// How long a refresh may wait for the verifier pool (and Apple).
    static let refreshDeadline: Duration = .seconds(60)

    private let committer: GroupCommitter
    private let refreshPool: VerifierPoolClient?
    private let interval: Duration
    private let retention: Duration
    private let refreshPerMinute: Int
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    init(
        committer: GroupCommitter, refreshPool: VerifierPoolClient?, settings: LedgerMaintenanceSettings,
        clock: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.committer = committer
        self.refreshPool = refreshPool
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
        guard let refreshPool, refreshBudget > 0, refreshPool.workerCount > 0 else { return }
        let claimed: [OwnedSubscription]
        do {
            guard case .claimed(let due) = try await committer.submit(.claimRefreshes(limit: refreshBudget), requestID: "refresh")
            else { return }
            claimed = due
        } catch {
            logger.warning("refresh claim failed", metadata: ["error": "\(loggable(error))"])
            return
        }
        await withDiscardingTaskGroup { group in
            for owned in claimed {
                group.addTask { await self.refresh(owned, pool: refreshPool) }
            }
        }
    }

    private func refresh(_ owned: OwnedSubscription, pool: VerifierPoolClient) async {
        let requestID = "refresh-\(UUID().uuidString.lowercased())"
        let request = VerifyRequest.with {
            $0.receiptData = owned.subscription.latestReceipt
            $0.startEnvironment = owned.subscription.key.environment
        }
        let deadline = clock() + Self.refreshDeadline.milliseconds
        do {
            let answer = try await pool.verify(
                Envelope(requestID: requestID, deadlineMilliseconds: deadline, body: .verifyRequest(request)))
            guard case .verifyResult(let result) = answer.body else {
                if case .failure(let failure) = answer.body {
                    logger.info("refresh not verified", metadata: ["request.id": "\(requestID)", "failure.code": "\(failure.code)"])
                }
                return
            }
            _ = try await committer.submit(.refreshResult(result, owner: owned.owner), requestID: requestID)
            logger.info("subscription refreshed", metadata: ["request.id": "\(requestID)"])
        } catch {
            logger.info("refresh failed", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
        }
    }
}

/// What the maintenance loop is configured with.
struct LedgerMaintenanceSettings: Sendable {
    var interval: Duration
    var retention: Duration
    var refreshPerMinute: Int
}
