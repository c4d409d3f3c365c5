import Contracts
import Logging
import ServiceLifecycle
import ZeroMQ

/// The ledger's requests, typed: what the gateway (and the CLI) call.
/// A refusal from the ledger is thrown as its `ServiceFailure`; no answer in
/// time as `EnvelopeClient.Timeout`.
public final class LedgerClient: Service, Sendable {
    private let client: EnvelopeClient

    public convenience init(context: ZMQContext, endpoint: String, logger: Logger) {
        self.init(context: context, endpoints: [endpoint], logger: logger)
    }

    /// Several ledgers on one PostgreSQL: requests are spread over those connected.
    /// `routingID` and `handedOverAnswers`: see `EnvelopeClient`.
    public init(
        context: ZMQContext, endpoints: [String], routingID: [UInt8]? = nil, logger: Logger,
        handedOverAnswers: EnvelopeClient.HandedOverAnswers? = nil
    ) {
        client = EnvelopeClient(
            context: context, endpoints: endpoints, routingID: routingID, logger: logger,
            handedOverAnswers: handedOverAnswers)
    }

    public func run() async throws { try await client.run() }

    public func record(
        _ request: RecordRequest, requestID: String, deadlineMilliseconds: Int64 = 0
    ) async throws -> RecordOutcome {
        let answer = try await client.request(
            Envelope(requestID: requestID, deadlineMilliseconds: deadlineMilliseconds, body: .recordRequest(request)))
        switch answer.body {
        case .recordOutcome(let outcome): return outcome
        case .failure(let failure): throw failure
        default: throw Self.unexpected
        }
    }

    public func applyNotification(
        _ notification: NotificationApply, requestID: String, deadlineMilliseconds: Int64 = 0
    ) async throws -> NotificationOutcome {
        let answer = try await client.request(
            Envelope(
                requestID: requestID, deadlineMilliseconds: deadlineMilliseconds,
                body: .notificationApply(notification)))
        switch answer.body {
        case .notificationOutcome(let outcome): return outcome
        case .failure(let failure): throw failure
        default: throw Self.unexpected
        }
    }

    public func entitlements(
        of userID: String, atMilliseconds: Int64 = 0, requestID: String, deadlineMilliseconds: Int64 = 0
    ) async throws -> EntitlementsAnswer {
        let query = EntitlementsQuery.with {
            $0.userID = userID
            $0.atMs = atMilliseconds
        }
        let answer = try await client.request(
            Envelope(requestID: requestID, deadlineMilliseconds: deadlineMilliseconds, body: .entitlementsQuery(query)))
        switch answer.body {
        case .entitlementsAnswer(let entitlements): return entitlements
        case .failure(let failure): throw failure
        default: throw Self.unexpected
        }
    }

    /// The answer kept for an Idempotency-Key, nil when none is; a key kept with
    /// another body is thrown as `idempotency_key_reused`.
    public func idempotentAnswer(
        for key: IdempotencyKey, requestID: String, deadlineMilliseconds: Int64 = 0
    ) async throws -> RecordOutcome? {
        let answer = try await client.request(
            Envelope(
                requestID: requestID, deadlineMilliseconds: deadlineMilliseconds,
                body: .idempotencyLookup(.with { $0.key = key })))
        switch answer.body {
        case .idempotencyAnswer(let kept): return kept.hasOutcome ? kept.outcome : nil
        case .failure(let failure): throw failure
        default: throw Self.unexpected
        }
    }

    /// One page of the transactions credited to a user, newest first.
    public func transactions(
        _ query: TransactionsQuery, requestID: String, deadlineMilliseconds: Int64 = 0
    ) async throws -> TransactionsPage {
        let answer = try await client.request(
            Envelope(requestID: requestID, deadlineMilliseconds: deadlineMilliseconds, body: .transactionsQuery(query)))
        switch answer.body {
        case .transactionsPage(let page): return page
        case .failure(let failure): throw failure
        default: throw Self.unexpected
        }
    }

    /// True when the ledger answers within `timeout`: readiness.
    public func ping(timeout: Duration = .seconds(1)) async -> Bool { await client.ping(timeout: timeout) }

    static let unexpected = ServiceFailure(.internalError, message: "the ledger answered with an unexpected message")
}
