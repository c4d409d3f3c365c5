import Contracts
import Foundation
import LedgerClient
import Logging
import Timekeeping

/// POST /v1/receipts and /v1/transactions behind the HTTP layer: verify
/// through the pool, check what the client claimed, then record in the ledger,
/// under ONE deadline carried in every message. A failure of either hop is a retryable error, never a false
/// success; a retried request is safe because the ledger deduplicates.
///
/// Why a receipt's and a transaction's envelopes are built and read in
/// synchronous helpers, kept out of line:
/// an async function's frame holds every value it keeps across a suspension,
/// and a frame lives in the request's task for as long as the request waits.
/// A message body (`Envelope.OneOf_Body`) is 217 bytes inline, and each copy
/// in a frame is held per request in flight (bench/JOURNAL.md, "2026-11-28").
struct ReceiptOrchestrator: Sendable {
    typealias Verify = @Sendable (Envelope) async throws -> Envelope

    let verify: Verify
    let ledger: any LedgerCalls
    /// Apple's whole budget (retries included), `STOREKEEPER_VERIFY_DEADLINE_MS`.
    let verifyDeadline: Duration
    /// Kept after verification for recording.
    static let recordAllowance: Duration = .seconds(5)
    /// Every deadline and `received_at_ms` is read from it.
    var clock: WallClock = .system
    /// Where a ledger answers a receipt a verifier handed it (`LedgerHandoff`);
    /// nil: the gateway records every receipt itself.
    var handOffRoute: HandOffRoute? = nil

    struct HandOffRoute: Sendable {
        /// The ZeroMQ identity of the gateway's ledger socket.
        var route: Data
        /// `STOREKEEPER_LEDGER_ENDPOINT`: a verifier naming other ledgers answers as before.
        var ledgers: [String]
    }

    struct Answer {
        /// The ledger's outcome, its `answerContext` always set: everything the answer shows.
        var outcome: RecordOutcome
        /// What the log line shows of the receipt verified; nil for an answer kept under an Idempotency-Key.
        var verified: Verified?
    }

    struct Verified {
        var style: ReceiptStyle
        var receiptSha256: String

        init(_ result: VerifyResult) {
            (style, receiptSha256) = (result.style, result.receiptSha256)
        }

        init(_ recorded: RecordedReceipt) {
            (style, receiptSha256) = (recorded.style, recorded.receiptSha256)
        }
    }

    func submit(
        _ submission: ReceiptSubmission, idempotency: IdempotencyKey?, requestID: String
    ) async throws(APIError) -> Answer {
        if let idempotency, let kept = try await keptAnswer(idempotency, requestID: requestID) { return kept }
        let verifyBy = clock.deadline(after: verifyDeadline)
        let recordBy = verifyBy + Self.recordAllowance.milliseconds
        // The verifier may record it on the way (`LedgerHandoff`), unless the gateway has to look at
        // the result first (what the client claimed) or keep the answer (an Idempotency-Key).
        let handOffTo = idempotency == nil && submission.transactionID == nil && submission.productID == nil
            ? handOffRoute : nil
        let answer = try await ask(
            Self.request(verifying: submission, requestID: requestID, by: verifyBy, recordBy: recordBy, handOffTo: handOffTo))
        if let recorded = Self.recorded(in: answer) { return recorded }
        guard let result = Self.verifyResult(in: answer) else { throw .unavailable }
        let context = try Self.context(of: result, checking: submission)
        return try await record(
            result, context: context, for: submission.userID, idempotency: idempotency, requestID: requestID,
            by: recordBy)
    }

    @inline(never)
    private static func request(
        verifying submission: ReceiptSubmission, requestID: String, by deadline: Int64, recordBy: Int64,
        handOffTo route: HandOffRoute?
    ) -> Envelope {
        let request = VerifyRequest.with {
            $0.receiptData = submission.receiptData
            $0.excludeOldTransactions = submission.excludeOldTransactions
            if let route {
                $0.ledgerHandoff = .with {
                    $0.userID = submission.userID
                    $0.gatewayRoute = route.route
                    $0.recordDeadlineMs = recordBy
                    $0.ledgerEndpoints = route.ledgers
                }
            }
        }
        return Envelope(requestID: requestID, deadlineMilliseconds: deadline, body: .verifyRequest(request))
    }

    /// A ledger's answer to a receipt its verifier handed over: the answer,
    /// as `record` makes it. The verifier hands over only results with
    /// purchases, which is all `check` asks of a receipt no claim came with.
    @inline(never)
    private static func recorded(in answer: Envelope) -> Answer? {
        guard case .recordedReceipt(let recorded) = answer.body else { return nil }
        var outcome = recorded.outcome
        if !outcome.hasAnswerContext { outcome.answerContext = recorded.context }
        return Answer(outcome: outcome, verified: outcome.replayed ? nil : Verified(recorded))
    }

    /// The answer's context; throws what `check` finds wrong with the receipt.
    @inline(never)
    private static func context(of result: VerifyResult, checking submission: ReceiptSubmission) throws(APIError) -> AnswerContext {
        let found = try check(submission, against: result)
        var context = context(of: result)
        if let named = submission.transactionID, let found {
            context.transactionID = named
            context.transactionFound = found
        }
        return context
    }

    /// POST /v1/transactions: a StoreKit 2 transaction, its JWS verified by
    /// the pool (locally, against Apple's chain) or fetched by its id from the
    /// App Store Server API and verified alike, and recorded exactly as a receipt's.
    func submit(
        _ submission: TransactionSubmission, idempotency: IdempotencyKey?, requestID: String
    ) async throws(APIError) -> Answer {
        if let idempotency, let kept = try await keptAnswer(idempotency, requestID: requestID) { return kept }
        let verifyBy = clock.deadline(after: verifyDeadline)
        let result = try await verified(Self.request(verifying: submission, requestID: requestID, by: verifyBy))
        return try await record(
            result, context: Self.context(ofSigned: result), for: submission.userID, idempotency: idempotency,
            requestID: requestID, by: verifyBy + Self.recordAllowance.milliseconds)
    }

    @inline(never)
    private static func request(verifying submission: TransactionSubmission, requestID: String, by deadline: Int64) -> Envelope {
        let body: Envelope.OneOf_Body =
            switch submission.purchase {
            case .signed(let jws): .signedTransactionRequest(.with { $0.signedTransaction = jws })
            case .transactionID(let id): .transactionIDRequest(.with { $0.transactionID = id })
            }
        return Envelope(requestID: requestID, deadlineMilliseconds: deadline, body: body)
    }

    @inline(never)
    private static func context(ofSigned result: VerifyResult) -> AnswerContext {
        var context = context(of: result)
        if let signed = result.transactions.first {
            context.transactionID = signed.transactionID
            context.transactionFound = true
        }
        return context
    }

    /// The answer the ledger kept for this Idempotency-Key: a retry is answered
    /// without asking Apple again. Out of line: its frame is not needed while Apple is asked.
    @inline(never)
    private func keptAnswer(_ key: IdempotencyKey, requestID: String) async throws(APIError) -> Answer? {
        do {
            let kept = try await ledger.idempotentAnswer(
                for: key, requestID: requestID,
                deadlineMilliseconds: clock.deadline(after: Self.recordAllowance))
            return kept.map { Answer(outcome: $0, verified: nil) }
        } catch let failure as ServiceFailure {
            throw APIError(failure)
        } catch {
            throw .unavailable
        }
    }

    static func context(of result: VerifyResult) -> AnswerContext {
        AnswerContext.with {
            $0.environment = result.environment
            $0.bundleID = result.bundleID
            $0.appleStatus = result.appleStatus
        }
    }

    /// The pool's `VerifyResult` for `request`.
    private func verified(_ request: Envelope) async throws(APIError) -> VerifyResult {
        guard let verified = Self.verifyResult(in: try await ask(request)) else { throw .unavailable }
        return verified
    }

    @inline(never)
    private static func verifyResult(in answer: Envelope) -> VerifyResult? {
        guard case .verifyResult(let verified) = answer.body else { return nil }
        return verified
    }

    /// The pool's answer to `request`; its failure as the API's error.
    private func ask(_ request: Envelope) async throws(APIError) -> Envelope {
        let answer: Envelope
        do {
            answer = try await verify(request)
        } catch {
            throw .unavailable
        }
        if let failure = Self.failure(in: answer) { throw APIError(failure) }
        return answer
    }

    @inline(never)
    private static func failure(in answer: Envelope) -> ServiceFailure? {
        guard case .failure(let failure) = answer.body else { return nil }
        return failure
    }

    @inline(never)
    private func record(
        _ result: VerifyResult, context: AnswerContext, for userID: String, idempotency: IdempotencyKey?,
        requestID: String, by deadline: Int64
    ) async throws(APIError) -> Answer {
        // Work whose deadline passed is not started: the client has given up.
        guard deadline > clock.now() else { throw .unavailable }
        do {
            var outcome = try await ledger.record(
                .with {
                    $0.userID = userID
                    $0.result = result
                    if let idempotency {
                        $0.idempotency = idempotency
                        $0.answerContext = context
                    }
                }, requestID: requestID, deadlineMilliseconds: deadline)
            // An answer kept under the same key (a concurrent request recorded first) carries its own context.
            if !outcome.hasAnswerContext { outcome.answerContext = context }
            return Answer(outcome: outcome, verified: outcome.replayed ? nil : Verified(result))
        } catch let failure as ServiceFailure {
            throw APIError(failure)
        } catch {
            throw .unavailable
        }
    }

    /// A version 2 notification's `signedPayload`, verified and decoded by the pool.
    func decodeNotification(signedPayload: String, requestID: String) async throws(APIError) -> NotificationApply {
        let request = SignedNotificationRequest.with {
            $0.signedPayload = signedPayload
            $0.receivedAtMs = clock.now()
        }
        let answer: Envelope
        do throws(APIError) {
            answer = try await ask(
                Envelope(
                    requestID: requestID, deadlineMilliseconds: clock.deadline(after: verifyDeadline),
                    body: .signedNotificationRequest(request)))
        } catch {
            // Spec: a version 2 body that does not verify against Apple's chain is 401.
            guard error.code == .signatureInvalid else { throw error }
            throw APIError(.unauthorized, error.message)
        }
        guard case .notificationApply(let notification) = answer.body else { throw .unavailable }
        return notification
    }

    /// The receipt must hold purchases; a named transaction is looked up, and a
    /// named product must be that transaction's (or, with no transaction named or
    /// the named one absent, some purchase's in the receipt).
    static func check(_ submission: ReceiptSubmission, against result: VerifyResult) throws(APIError) -> Bool? {
        guard !result.transactions.isEmpty else {
            throw APIError(.receiptInvalid, "the receipt holds no purchases of this app")
        }
        let named = submission.transactionID.map { id in result.transactions.first { $0.transactionID == id } }
        if let product = submission.productID {
            // A named transaction that is absent does not weaken the check: the product
            // must then be some purchase's in the receipt, as with no transaction named.
            let matches =
                if case .some(.some(let transaction)) = named {
                    transaction.productID == product
                } else {
                    result.transactions.contains { $0.productID == product }
                }
            guard matches else {
                throw APIError(.productMismatch, "product_id is not the product of that transaction")
            }
        }
        return named.map { $0 != nil }
    }
}
