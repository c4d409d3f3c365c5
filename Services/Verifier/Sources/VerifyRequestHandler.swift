import Contracts
import Foundation

/// Answers a pool request envelope: a receipt goes to Apple (verifyReceipt,
/// or in `server_api` mode the App Store Server API's history); a StoreKit 2
/// transaction or a version 2 notification is verified here, locally; a
/// transaction id is fetched from the App Store Server API and verified as a
/// StoreKit 2 transaction is.
struct VerifyRequestHandler: Sendable {
    /// Kept back from the deadline for the answer's way back through the pool.
    static let replyAllowance: Duration = .milliseconds(250)

    /// Without the Server API a transaction id cannot be fetched: the
    /// deployment accepts only the JWS (spec: the id form needs the credentials).
    static let noServerAPI = ServiceFailure(
        .badRequest, message: "transaction_id needs App Store Server API credentials; send signed_transaction")

    let verifier: ReceiptVerifier
    let signedData: SignedDataReader
    /// The App Store Server API, when configured: POST /v1/transactions with a transaction_id.
    let serverAPI: AppStoreServerClient?
    /// `STOREKEEPER_RECEIPT_VERIFICATION=server_api`: receipts are read from the Server API's history.
    let historyReceipts: ServerAPIReceiptReader?
    let defaultDeadline: Duration

    func handle(_ envelope: Envelope) async -> Envelope {
        let nowMs = Int64(Date().timeIntervalSince1970 * 1_000)
        let body: Envelope.OneOf_Body
        switch envelope.body {
        case .verifyRequest(let request):
            body = await verifyReceipt(request, envelope, nowMs: nowMs)
        case .signedTransactionRequest(let request):
            do {
                body = .verifyResult(try await signedData.transaction(request.signedTransaction, nowMs: nowMs))
            } catch {
                body = .failure(error)
            }
        case .transactionIDRequest(let request):
            body = await fetchTransaction(request.transactionID, by: deadline(envelope, nowMs: nowMs))
        case .signedNotificationRequest(let request):
            do {
                body = .notificationApply(
                    try await signedData.notification(request.signedPayload, receivedAtMs: request.receivedAtMs))
            } catch {
                body = .failure(error)
            }
        default:
            body = .failure(ServiceFailure(.internalError, message: "a verifier only answers verify requests"))
        }
        return Envelope(requestID: envelope.requestID, body: body)
    }

    /// The envelope's absolute deadline, when it is sooner than our own default, less
    /// the time the answer needs to travel back: an answer after the deadline is wasted.
    private func deadline(_ envelope: Envelope, nowMs: Int64) -> ContinuousClock.Instant {
        var budget = defaultDeadline
        if envelope.deadlineMs > 0 { budget = min(budget, .milliseconds(max(0, envelope.deadlineMs - nowMs))) }
        if budget > Self.replyAllowance * 2 { budget -= Self.replyAllowance }
        return .now + budget
    }

    private func verifyReceipt(_ request: VerifyRequest, _ envelope: Envelope, nowMs: Int64) async -> Envelope.OneOf_Body {
        let deadline = deadline(envelope, nowMs: nowMs)
        if let historyReceipts {
            do {
                return .verifyResult(try await historyReceipts.verify(request, deadline: deadline, requestID: envelope.requestID))
            } catch {
                return .failure(error)
            }
        }
        switch await verifier.verify(request, deadline: deadline, requestID: envelope.requestID) {
        case .success(let verified): return .verifyResult(verified)
        case .failure(let failure): return .failure(failure.serviceFailure)
        }
    }

    /// Get Transaction Info (production, then sandbox on 4040010): the same
    /// `VerifyResult` a StoreKit 2 JWS of that transaction gives, so the ledger
    /// records one purchase once whichever way it came.
    private func fetchTransaction(_ id: String, by deadline: ContinuousClock.Instant) async -> Envelope.OneOf_Body {
        guard let serverAPI else { return .failure(Self.noServerAPI) }
        do {
            return .verifyResult(try await serverAPI.transactionInfo(id, deadline: deadline))
        } catch {
            return .failure(error.serviceFailure)
        }
    }
}
