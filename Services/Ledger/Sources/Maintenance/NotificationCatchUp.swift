import Contracts
import Foundation
import Logging
import Metrics
import ServiceLifecycle

/// No missed notification: every `period`, for each environment, asks the
/// verifier pool for Apple's notification history since the last span
/// applied (`CatchUpWindow`), and applies each notification through the same
/// rule as the gateway's (applied at most once, by its id, so one that did
/// arrive changes nothing). The cursor lives in the database (`catchup_cursor`):
/// it survives restarts, and a lease on it lets one ledger at a time catch
/// up when several share PostgreSQL.
final class NotificationCatchUp: Service, Sendable {
    /// How long a claimed span stays this ledger's: longer than a pool request and
    /// the commits after it; a ledger that dies holding it is relieved after this.
    static let leaseMs: Int64 = 5 * 60_000
    /// Spans caught up in one run at most (a ledger that was down for days goes on next period).
    static let maxSpansPerRun = 48

    private let committer: GroupCommitter
    private let serverAPI: LedgerServerAPI
    private let environments: [AppleEnvironment]
    private let period: Duration
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    /// Names this ledger's lease (`holder(sharedStore:)`).
    private let holder: String
    private let recovered = Counter(label: "storekeeper_notification_catchup_recovered_total")

    /// The lease's holder. Ledgers sharing PostgreSQL each get their own, so one
    /// ledger at a time catches up. A SQLite file has one ledger, ever: a
    /// restarted one takes the lease its killed predecessor held at once,
    /// rather than waiting `leaseMs` for it.
    static func holder(sharedStore: Bool) -> String {
        sharedStore ? UUID().uuidString.lowercased() : "sole-ledger"
    }

    /// - Parameter environments: production, and sandbox unless sandbox data is refused.
    init(
        committer: GroupCommitter, serverAPI: LedgerServerAPI, environments: [AppleEnvironment], period: Duration,
        holder: String, clock: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.holder = holder
        self.committer = committer
        self.serverAPI = serverAPI
        self.environments = environments
        self.period = period
        self.clock = clock
        self.logger = logger
    }

    func run() async throws {
        await runPeriodically(every: period) { _ = await self.catchUpOnce() }
    }

    /// One run over every environment; the notifications it applied that had not been.
    @discardableResult
    func catchUpOnce() async -> Int {
        guard serverAPI.hasVerifiers, serverAPI.shouldAsk else { return 0 }
        var applied = 0
        for environment in environments {
            for _ in 0..<Self.maxSpansPerRun {
                guard let span = await catchUp(environment) else { break }
                applied += span.applied
                if span.reachedNow { break }
            }
        }
        return applied
    }

    /// One span: claimed, fetched, applied, the cursor moved past it. Nil when
    /// there is nothing to do now (another ledger holds the lease, or it failed).
    private func catchUp(_ environment: AppleEnvironment) async -> (applied: Int, reachedNow: Bool)? {
        let requestID = "catchup-\(UUID().uuidString.lowercased())"
        let claimed: CatchUpClaim
        do {
            guard
                case .catchUp(let claim) = try await committer.submit(
                    .claimCatchUp(environment, holder: holder, leaseMs: Self.leaseMs), requestID: requestID),
                let claim
            else { return nil }
            claimed = claim
        } catch {
            logger.warning("catch-up claim failed", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
            return nil
        }
        let window = CatchUpWindow(after: claimed.appliedUntilMs, nowMs: clock())
        let answer = await serverAPI.notificationHistory(
            environment, from: window.startMs, to: window.endMs, requestID: requestID)
        guard case .answered(let notifications) = answer else {
            if case .failed(let code, _) = answer {
                logger.info("notification history not fetched", metadata: ["request.id": "\(requestID)", "failure.code": "\(code)"])
            }
            await release(environment, appliedUntil: nil, requestID: requestID)
            return nil
        }
        var applied = 0
        for notification in notifications {
            switch await apply(notification, requestID: requestID) {
            case .some(true):
                applied += 1
                recovered.increment()
            case .some(false): break
            case nil:
                // A commit failed (not the rule): try the span again next time.
                await release(environment, appliedUntil: nil, requestID: requestID)
                return nil
            }
        }
        await release(environment, appliedUntil: window.endMs, requestID: requestID)
        if applied > 0 {
            logger.info(
                "notifications recovered from Apple's history",
                metadata: [
                    "request.id": "\(requestID)", "catchup.recovered": "\(applied)",
                    "catchup.fetched": "\(notifications.count)",
                ])
        }
        return (applied, window.reachesNow)
    }

    /// Whether the notification was applied now (false: it had been, or the
    /// rule refused it, which it would do again); nil when the commit failed.
    private func apply(_ notification: NotificationApply, requestID: String) async -> Bool? {
        // TEST and summary notifications are about no purchase: the gateway stores none of them either.
        guard !notification.originalTransactionID.isEmpty else { return false }
        do {
            guard case .notified(let outcome) = try await committer.submit(.notification(notification), requestID: requestID)
            else { return false }
            return outcome.applied
        } catch let failure as LedgerFailure {
            logger.warning(
                "a notification from Apple's history was refused",
                metadata: [
                    "request.id": "\(requestID)", "notification.type": "\(notification.notificationType)",
                    "failure.code": "\(failure.code)",
                ])
            return false
        } catch {
            logger.warning("catch-up commit failed", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
            return nil
        }
    }

    /// Gives the lease back, moving the cursor to `appliedUntil` when given.
    private func release(_ environment: AppleEnvironment, appliedUntil: Int64?, requestID: String) async {
        do {
            _ = try await committer.submit(
                .releaseCatchUp(environment, holder: holder, appliedUntil: appliedUntil), requestID: requestID)
        } catch {
            logger.warning("catch-up cursor not saved", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
        }
    }
}
