import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import StorekeeperCore
import Synchronization

@testable import Gateway

/// An in-memory ledger for the HTTP tests: answers what the test sets, and
/// remembers what it was asked.
final class LedgerDouble: LedgerCalls {
    struct State {
        var recordAnswer: Result<RecordOutcome, any Error> = .success(RecordOutcome())
        var notificationAnswer: Result<NotificationOutcome, any Error> = .success(.with { $0.applied = true })
        var records: [(RecordRequest, String, Int64)] = []
        var notifications: [NotificationApply] = []
        /// Answers kept per Idempotency-Key, as the ledger keeps them.
        var kept: [String: (digest: String, outcome: RecordOutcome)] = [:]
        var transactionQueries: [TransactionsQuery] = []
        var transactionsAnswer: Result<TransactionsPage, any Error> = .success(TransactionsPage())
    }

    let state = Mutex(State())

    func record(_ request: RecordRequest, requestID: String, deadlineMilliseconds: Int64) async throws -> RecordOutcome {
        try state.withLock { state in
            state.records.append((request, requestID, deadlineMilliseconds))
            var outcome = try state.recordAnswer.get()
            outcome.userID = request.userID
            if request.hasIdempotency {
                outcome.answerContext = request.answerContext
                state.kept[request.idempotency.scope + " " + request.idempotency.key] = (request.idempotency.requestSha256, outcome)
            }
            return outcome
        }
    }

    func applyNotification(
        _ notification: NotificationApply, requestID: String, deadlineMilliseconds: Int64
    ) async throws -> NotificationOutcome {
        try state.withLock { state in
            state.notifications.append(notification)
            return try state.notificationAnswer.get()
        }
    }

    func idempotentAnswer(
        for key: IdempotencyKey, requestID: String, deadlineMilliseconds: Int64
    ) async throws -> RecordOutcome? {
        try state.withLock { state in
            guard let kept = state.kept[key.scope + " " + key.key] else { return nil }
            guard kept.digest == key.requestSha256 else {
                throw ServiceFailure(.idempotencyKeyReused, message: "this Idempotency-Key was used with another request body")
            }
            var outcome = kept.outcome
            outcome.replayed = true
            return outcome
        }
    }

    func transactions(
        _ query: TransactionsQuery, requestID: String, deadlineMilliseconds: Int64
    ) async throws -> TransactionsPage {
        try state.withLock { state in
            state.transactionQueries.append(query)
            var page = try state.transactionsAnswer.get()
            page.userID = query.userID
            return page
        }
    }

    func entitlements(
        of userID: String, atMilliseconds: Int64, requestID: String, deadlineMilliseconds: Int64
    ) async throws -> EntitlementsAnswer {
        EntitlementsAnswer.with {
            $0.userID = userID
            $0.entitlements = [
                .with {
                    $0.productID = "com.example.pro.monthly"
                    $0.originalTransactionID = "1000"
                    $0.environment = .sandbox
                    $0.expiresDateMs = 1_574_324_473_000
                    $0.active = false
                    $0.state = .expired
                }
            ]
        }
    }
}

/// The verifier pool's answers for the HTTP tests.
final class VerifierDouble: Sendable {
    let answer = Mutex<Envelope.OneOf_Body?>(nil)
    let requests = Mutex<[Envelope]>([])

    func verify(_ envelope: Envelope) async throws -> Envelope {
        requests.withLock { $0.append(envelope) }
        guard let body = answer.withLock({ $0 }) else { throw CancellationError() }
        return Envelope(requestID: envelope.requestID, body: body)
    }

    static func result(_ transactions: [(id: String, product: String)]) -> Envelope.OneOf_Body {
        .verifyResult(.with {
            $0.environment = .sandbox
            $0.bundleID = "com.example.app"
            $0.receiptSha256 = String(repeating: "ab", count: 32)
            $0.transactions = transactions.map { transaction in
                .with {
                    $0.transactionID = transaction.id
                    $0.originalTransactionID = transaction.id
                    $0.productID = transaction.product
                    $0.quantity = 1
                }
            }
        })
    }
}

/// A gateway router on doubles, driven in-process.
struct GatewayHarness {
    let ledger = LedgerDouble()
    let verifier = VerifierDouble()
    var environment: [String: String] = [:]
    var ready = GatewayRouter.Readiness(ledger: true, verifiers: 2)
    /// Set: the gateway lets verifiers hand receipts to a ledger (`LedgerHandoff`).
    var handOffRoute: ReceiptOrchestrator.HandOffRoute? = nil

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let configuration = try StorekeeperConfiguration(reader: EnvironmentReader(environment))
        let verifier = self.verifier
        let ready = self.ready
        var orchestrator = ReceiptOrchestrator(
            verify: { try await verifier.verify($0) }, ledger: ledger, verifyDeadline: configuration.apple.verifyDeadline)
        orchestrator.handOffRoute = handOffRoute
        let router = GatewayRouter.make(
            .init(
                orchestrator: orchestrator,
                ledger: ledger, readiness: { ready }, settings: configuration.gateway,
                sharedSecret: configuration.apple.sharedSecret, bundleIDs: configuration.apple.bundleIDs,
                metrics: PrometheusCollectorRegistry(), acceptSandbox: configuration.apple.acceptSandbox))
        try await Application(router: router).test(.router, body)
    }
}

extension TestResponse {
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:]
    }

    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
}

func jsonBody(_ object: [String: Any]) -> ByteBuffer {
    ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
}
