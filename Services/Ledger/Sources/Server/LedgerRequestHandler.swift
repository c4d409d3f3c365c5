import Contracts
import Foundation
import Logging

/// Answers the ledger endpoint: writes go through the group committer, reads
/// (entitlements, replay) straight to a snapshot. Work whose deadline passed
/// before it arrived is not started: nobody waits for its answer.
struct LedgerRequestHandler: Sendable {
    let committer: GroupCommitter
    let store: any LedgerStore
    let view: EntitlementView
    let clock: @Sendable () -> Int64
    let logger: Logger
    /// Largest replay batch.
    let replayBatchLimit: Int

    static let deadlinePassed = ServiceFailure(.deadlineExceeded, message: "the deadline passed", retryable: true)

    func handle(_ envelope: Envelope) async -> Envelope {
        let requestID = envelope.requestID
        if envelope.isExpired(nowMilliseconds: clock()) { return reply(requestID, .failure(Self.deadlinePassed)) }
        do {
            switch envelope.body {
            case .recordRequest(let request):
                guard
                    case .recorded(let outcome) = try await committer.submit(
                        .record(request), requestID: requestID, deadline: envelope.deadlineMs)
                else { break }
                logger.debug(
                    "recorded",
                    metadata: [
                        "request.id": "\(requestID)", "ledger.granted": "\(outcome.granted.count)",
                        "ledger.already_granted": "\(outcome.alreadyGranted.count)",
                        "ledger.revoked": "\(outcome.revoked.count)",
                    ])
                return reply(requestID, .recordOutcome(outcome))
            case .notificationApply(let notification):
                guard
                    case .notified(let outcome) = try await committer.submit(
                        .notification(notification), requestID: requestID, deadline: envelope.deadlineMs)
                else { break }
                logger.info(
                    "notification stored",
                    metadata: [
                        "request.id": "\(requestID)", "notification.type": "\(notification.notificationType)",
                        "notification.applied": "\(outcome.applied)",
                    ])
                return reply(requestID, .notificationOutcome(outcome))
            case .entitlementsQuery(let query):
                let now = query.atMs > 0 ? query.atMs : clock()
                let view = self.view
                let shown = try await store.read { reader in try view.shown(query.userID, at: now, reader: reader) }
                return reply(requestID, .entitlementsAnswer(.with {
                    $0.userID = query.userID
                    $0.entitlements = shown.entitlements
                    if let access = shown.access {
                        $0.access = access
                        $0.accessListed = true
                    }
                }))
            case .idempotencyLookup(let lookup):
                let now = clock()
                let kept = try await store.read { reader in
                    try IdempotencyRule.kept(lookup.key, now: now, reader: reader)
                }
                return reply(requestID, .idempotencyAnswer(.with { answer in kept.map { answer.outcome = $0 } }))
            case .transactionsQuery(let query):
                return reply(requestID, .transactionsPage(try await CreditListing.page(query, store: store)))
            case .replayRequest(let request):
                return reply(requestID, .replayBatch(try await replay(request)))
            default:
                return reply(requestID, .failure(ServiceFailure(.badRequest, message: "the ledger does not answer this message")))
            }
        } catch is GroupCommitter.DeadlinePassed {
            return reply(requestID, .failure(Self.deadlinePassed))
        } catch let failure as LedgerFailure {
            logger.debug("refused", metadata: ["request.id": "\(requestID)", "ledger.failure": "\(failure.code.rawValue)"])
            return reply(requestID, .failure(failure.serviceFailure))
        } catch {
            logger.error("request failed", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
            return reply(
                requestID,
                .failure(ServiceFailure(.internalError, message: "the ledger could not store it", retryable: true)))
        }
        return reply(requestID, .failure(ServiceFailure(.internalError, message: "unexpected ledger outcome")))
    }

    private func replay(_ request: ReplayRequest) async throws -> ReplayBatch {
        let limit = request.maxEvents == 0 ? replayBatchLimit : min(Int(request.maxEvents), replayBatchLimit)
        return try await store.read { reader in
            let events = try reader.events(after: request.afterSeq, limit: limit)
            let head = try reader.headSeq()
            let oldest = try reader.oldestRetainedSeq()
            return ReplayBatch.with {
                $0.events = events
                $0.headSeq = head
                $0.oldestRetainedSeq = oldest
                $0.more = (events.last?.seq ?? head) < head
            }
        }
    }

    private func reply(_ requestID: String, _ body: Envelope.OneOf_Body) -> Envelope {
        Envelope(requestID: requestID, body: body)
    }
}
