import Contracts
import Foundation
import LedgerClient
import Logging

/// POST /v1/receipts and /v1/transactions behind the HTTP layer: verify
/// through the pool, check what the client claimed, then record in the ledger,
/// under ONE deadline carried in every message. A failure of either hop is a retryable error, never a false
/// success; a retried request is safe because the ledger deduplicates.
struct ReceiptOrchestrator: Sendable {
    typealias Verify = @Sendable (Envelope) async throws -> Envelope

    let verify: Verify
    let ledger: any LedgerCalls
    /// Apple's whole budget (retries included), `STOREKEEPER_VERIFY_DEADLINE_MS`.
    let verifyDeadline: Duration
    /// Kept after verification for recording.
    static let recordAllowance: Duration = .seconds(5)

    struct Answer {
        var result: VerifyResult
        var outcome: RecordOutcome
        /// Whether the named transaction is in the receipt (nil when none was named).
        var transactionFound: Bool?
    }

    func submit(_ submission: ReceiptSubmission, requestID: String) async throws(APIError) -> Answer {
        let request = VerifyRequest.with {
            $0.receiptData = submission.receiptData
            $0.excludeOldTransactions = submission.excludeOldTransactions
        }
        let (result, recordBy) = try await verified(.verifyRequest(request), requestID: requestID)
        let found = try Self.check(submission, against: result)
        let outcome = try await record(result, for: submission.userID, requestID: requestID, by: recordBy)
        return Answer(result: result, outcome: outcome, transactionFound: found)
    }

    /// POST /v1/transactions: a StoreKit 2 transaction, verified by the pool
    /// (locally, against Apple's chain) and recorded exactly as a receipt's.
    func submit(_ submission: SignedTransactionSubmission, requestID: String) async throws(APIError) -> Answer {
        let request = SignedTransactionRequest.with { $0.signedTransaction = submission.signedTransaction }
        let (result, recordBy) = try await verified(.signedTransactionRequest(request), requestID: requestID)
        let outcome = try await record(result, for: submission.userID, requestID: requestID, by: recordBy)
        return Answer(result: result, outcome: outcome, transactionFound: true)
    }

    /// The pool's `VerifyResult` for `body`, and the deadline left for recording it.
    private func verified(_ body: Envelope.OneOf_Body, requestID: String) async throws(APIError) -> (VerifyResult, Int64) {
        let verifyBy = Self.nowMilliseconds() + Self.milliseconds(verifyDeadline)
        guard case .verifyResult(let verified) = try await ask(body, requestID: requestID, by: verifyBy) else {
            throw .unavailable
        }
        return (verified, verifyBy + Self.milliseconds(Self.recordAllowance))
    }

    /// The pool's answer to `body`; its failure as the API's error.
    private func ask(_ body: Envelope.OneOf_Body, requestID: String, by deadline: Int64) async throws(APIError) -> Envelope.OneOf_Body? {
        let answer: Envelope
        do {
            answer = try await verify(Envelope(requestID: requestID, deadlineMilliseconds: deadline, body: body))
        } catch {
            throw .unavailable
        }
        if case .failure(let failure) = answer.body { throw APIError(failure) }
        return answer.body
    }

    private func record(
        _ result: VerifyResult, for userID: String, requestID: String, by deadline: Int64
    ) async throws(APIError) -> RecordOutcome {
        do {
            return try await ledger.record(
                .with {
                    $0.userID = userID
                    $0.result = result
                }, requestID: requestID, deadlineMilliseconds: deadline)
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
            $0.receivedAtMs = Self.nowMilliseconds()
        }
        let answer: Envelope.OneOf_Body?
        do throws(APIError) {
            answer = try await ask(
                .signedNotificationRequest(request), requestID: requestID,
                by: Self.nowMilliseconds() + Self.milliseconds(verifyDeadline))
        } catch {
            // Spec: a version 2 body that does not verify against Apple's chain is 401.
            guard error.code == FailureCode.signatureInvalid.rawValue else { throw error }
            throw APIError(status: .unauthorized, code: "unauthorized", message: error.message)
        }
        guard case .notificationApply(let notification) = answer else { throw .unavailable }
        return notification
    }

    /// The receipt must hold purchases; a named transaction is looked up, and a
    /// named product must be that transaction's (or, with no transaction named,
    /// some purchase's in the receipt).
    static func check(_ submission: ReceiptSubmission, against result: VerifyResult) throws(APIError) -> Bool? {
        guard !result.transactions.isEmpty else {
            throw APIError(status: .unprocessableContent, code: "receipt_invalid", message: "the receipt holds no purchases of this app")
        }
        let named = submission.transactionID.map { id in result.transactions.first { $0.transactionID == id } }
        if let product = submission.productID {
            let matches: Bool
            if let named { matches = named.map { $0.productID == product } ?? true } else {
                matches = result.transactions.contains { $0.productID == product }
            }
            guard matches else {
                throw APIError(
                    status: .unprocessableContent, code: "product_mismatch",
                    message: "product_id is not the product of that transaction")
            }
        }
        return named.map { $0 != nil }
    }

    static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000) }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
