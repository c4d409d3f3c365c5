import Contracts
import Foundation
import LedgerClient
import Logging

/// POST /v1/receipts behind the HTTP layer: verify through the pool, check what
/// the client claimed, then record in the ledger, under ONE deadline carried in
/// every message. A failure of either hop is a retryable error, never a false
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
        let now = Self.nowMilliseconds()
        let verifyBy = now + Self.milliseconds(verifyDeadline)
        let recordBy = verifyBy + Self.milliseconds(Self.recordAllowance)
        let request = VerifyRequest.with {
            $0.receiptData = submission.receiptData
            $0.excludeOldTransactions = submission.excludeOldTransactions
        }
        let answer: Envelope
        do {
            answer = try await verify(Envelope(requestID: requestID, deadlineMilliseconds: verifyBy, body: .verifyRequest(request)))
        } catch {
            throw .unavailable
        }
        let result: VerifyResult
        switch answer.body {
        case .verifyResult(let verified): result = verified
        case .failure(let failure): throw APIError(failure)
        default: throw .unavailable
        }
        let found = try Self.check(submission, against: result)
        do {
            let outcome = try await ledger.record(
                .with {
                    $0.userID = submission.userID
                    $0.result = result
                }, requestID: requestID, deadlineMilliseconds: recordBy)
            return Answer(result: result, outcome: outcome, transactionFound: found)
        } catch let failure as ServiceFailure {
            throw APIError(failure)
        } catch {
            throw .unavailable
        }
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
