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

    /// Answers `envelope` through `reply`, once. A write (a record or a
    /// notification) goes to the writer, which answers from where its commit
    /// ends, the writer's thread on SQLite: no task wakes for it on the way
    /// in or out. A read comes back as work for the caller's tasks to run.
    func handle(_ envelope: Envelope, reply: @escaping EnvelopeServer.Reply) -> EnvelopeServer.Work? {
        let requestID = envelope.requestID
        if envelope.isExpired(nowMilliseconds: clock()) {
            reply(answer(requestID, .failure(Self.deadlinePassed)))
            return nil
        }
        let work: LedgerWork
        switch envelope.body {
        case .recordRequest(let request): work = .record(request)
        case .notificationApply(let notification): work = .notification(notification)
        default: return { reply(await read(envelope)) }
        }
        committer.submit(work, requestID: requestID, deadline: envelope.deadlineMs) { result in
            reply(written(result, by: work, requestID: requestID))
        }
        return nil
    }

    /// `handle(_:reply:)`, awaited.
    func handle(_ envelope: Envelope) async -> Envelope {
        let (answers, answered) = AsyncStream.makeStream(of: Envelope.self)
        if let read = handle(envelope, reply: { answered.yield($0) }) { await read() }
        for await answer in answers { return answer }
        preconditionFailure("every request is answered")
    }

    private func written(_ result: Result<LedgerWorkOutput, any Error>, by work: LedgerWork, requestID: String) -> Envelope {
        switch (result, work) {
        case (.success(.recorded(let outcome)), _):
            logger.debug(
                "recorded",
                metadata: [
                    "request.id": "\(requestID)", "ledger.granted": "\(outcome.granted.count)",
                    "ledger.already_granted": "\(outcome.alreadyGranted.count)",
                    "ledger.revoked": "\(outcome.revoked.count)",
                ])
            return answer(requestID, .recordOutcome(outcome))
        case (.success(.notified(let outcome)), .notification(let notification)):
            logger.info(
                "notification stored",
                metadata: [
                    "request.id": "\(requestID)", "notification.type": "\(notification.notificationType)",
                    "notification.applied": "\(outcome.applied)",
                ])
            return answer(requestID, .notificationOutcome(outcome))
        case (.success, _):
            return answer(requestID, .failure(ServiceFailure(.internalError, message: "unexpected ledger outcome")))
        case (.failure(let error), _):
            return failed(requestID, error)
        }
    }

    /// The reads: straight to a snapshot, beside the writer.
    private func read(_ envelope: Envelope) async -> Envelope {
        let requestID = envelope.requestID
        do {
            switch envelope.body {
            case .entitlementsQuery(let query):
                let now = query.atMs > 0 ? query.atMs : clock()
                let view = self.view
                let shown = try await store.read { reader in try view.shown(query.userID, at: now, reader: reader) }
                return answer(requestID, .entitlementsAnswer(.with {
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
                return answer(requestID, .idempotencyAnswer(.with { answer in kept.map { answer.outcome = $0 } }))
            case .transactionsQuery(let query):
                return answer(requestID, .transactionsPage(try await CreditListing.page(query, store: store)))
            case .replayRequest(let request):
                return answer(requestID, .replayBatch(try await replay(request)))
            default:
                return answer(requestID, .failure(ServiceFailure(.badRequest, message: "the ledger does not answer this message")))
            }
        } catch {
            return failed(requestID, error)
        }
    }

    /// A refusal or failure as the answer: a rule's refusal as itself, the rest retryable.
    private func failed(_ requestID: String, _ error: any Error) -> Envelope {
        switch error {
        case is GroupCommitter.DeadlinePassed:
            return answer(requestID, .failure(Self.deadlinePassed))
        case let failure as LedgerFailure:
            logger.debug("refused", metadata: ["request.id": "\(requestID)", "ledger.failure": "\(failure.code.rawValue)"])
            return answer(requestID, .failure(failure.serviceFailure))
        default:
            logger.error("request failed", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
            return answer(
                requestID,
                .failure(ServiceFailure(.internalError, message: "the ledger could not store it", retryable: true)))
        }
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

    private func answer(_ requestID: String, _ body: Envelope.OneOf_Body) -> Envelope {
        Envelope(requestID: requestID, body: body)
    }
}
