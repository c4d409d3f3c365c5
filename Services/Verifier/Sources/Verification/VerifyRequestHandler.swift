import Contracts
import Timekeeping

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

    /// Receipts, verifyReceipt's or (`server_api`) the Server API's history, behind one cap and coalescing.
    let verifier: ReceiptVerifier
    let signedData: SignedDataReader
    /// The App Store Server API, when configured: POST /v1/transactions with a
    /// transaction_id, and the ledger's refreshes, notification catch-up and
    /// consumption information (`ServerAPIPoolRequests`).
    let serverAPI: AppStoreServerClient?
    let defaultDeadline: Duration
    /// Reads the envelope's deadline and stamps the signed data's checks.
    var clock: WallClock = .system

    /// The pool worker runs requests on the curl loop's thread, which suits a
    /// verifyReceipt call: a transfer and a JSON read. A request that checks
    /// signatures (a JWS chain costs far more) moves to the global executor:
    /// on the loop it would hold up every transfer and keep the verifier to
    /// one core.
    func handle(_ envelope: Envelope) async -> Envelope {
        guard Self.checksSignatures(envelope.body, receiptsCheckSignatures: verifier.checksSignatures) else {
            return await answer(envelope)
        }
        return await withTaskExecutorPreference(globalConcurrentExecutor) { await answer(envelope) }
    }

    /// Whether answering `body` checks signatures: all but a receipt read
    /// through verifyReceipt (the Server API's answers are signed too).
    static func checksSignatures(_ body: Envelope.OneOf_Body?, receiptsCheckSignatures: Bool) -> Bool {
        guard case .verifyRequest = body else { return true }
        return receiptsCheckSignatures
    }

    private func answer(_ envelope: Envelope) async -> Envelope {
        let nowMs = clock.now()
        let body: Envelope.OneOf_Body
        switch envelope.body {
        case .verifyRequest(let request):
            body = await verifyReceipt(request, envelope, nowMs: nowMs)
        case .signedTransactionRequest(let request):
            body = await signedTransaction(request, nowMs: nowMs)
        case .transactionIDRequest(let request):
            body = await fetchTransaction(request.transactionID, by: deadline(of: envelope, nowMs: nowMs))
        case .signedNotificationRequest(let request):
            body = await signedNotification(request)
        default:
            body = await poolRequest(envelope, nowMs: nowMs)
        }
        return Envelope(requestID: envelope.requestID, body: body)
    }

    // Every kind of request but a receipt is answered out of line: inlined
    // here, each kind's values would sit in `answer`'s async frame, which a
    // receipt holds in its task all the while Apple answers (bench/JOURNAL.md,
    // "2026-11-28").

    @inline(never)
    private func signedTransaction(_ request: SignedTransactionRequest, nowMs: Int64) async -> Envelope.OneOf_Body {
        do {
            return .verifyResult(try await signedData.transaction(request.signedTransaction, nowMs: nowMs))
        } catch {
            return .failure(error)
        }
    }

    @inline(never)
    private func signedNotification(_ request: SignedNotificationRequest) async -> Envelope.OneOf_Body {
        do {
            return .notificationApply(
                try await signedData.notification(request.signedPayload, receivedAtMs: request.receivedAtMs))
        } catch {
            return .failure(error)
        }
    }

    /// The ledger's App Store Server API requests (its refresh pool), else nothing a verifier answers.
    @inline(never)
    private func poolRequest(_ envelope: Envelope, nowMs: Int64) async -> Envelope.OneOf_Body {
        await ServerAPIPoolRequests(client: serverAPI).answer(
            envelope.body, deadline: deadline(of: envelope, nowMs: nowMs), nowMs: nowMs)
            ?? .failure(ServiceFailure(.internalError, message: "a verifier only answers verify requests"))
    }

    /// The envelope's deadline as an instant on this process's clock (see `budget`).
    private func deadline(of envelope: Envelope, nowMs: Int64) -> ContinuousClock.Instant {
        .now + Self.budget(deadlineMs: envelope.deadlineMs, nowMs: nowMs, defaultDeadline: defaultDeadline)
    }

    private func verifyReceipt(_ request: VerifyRequest, _ envelope: Envelope, nowMs: Int64) async -> Envelope.OneOf_Body {
        switch await verifier.verify(request, deadline: deadline(of: envelope, nowMs: nowMs), requestID: envelope.requestID) {
        case .success(let verified): return .verifyResult(verified)
        case .failure(let failure): return .failure(failure.serviceFailure)
        }
    }

    /// Get Transaction Info (production, then sandbox on 4040010): the same
    /// `VerifyResult` a StoreKit 2 JWS of that transaction gives, so the ledger
    /// records one purchase once whichever way it came.
    @inline(never)
    private func fetchTransaction(_ id: String, by deadline: ContinuousClock.Instant) async -> Envelope.OneOf_Body {
        guard let serverAPI else { return .failure(Self.noServerAPI) }
        do {
            return .verifyResult(try await serverAPI.transactionInfo(id, deadline: deadline))
        } catch {
            return .failure(error.serviceFailure)
        }
    }

    /// How long Apple may take: the envelope's absolute deadline (0: none), when
    /// it is sooner than our own default, less the time the answer needs to
    /// travel back (an answer after the deadline is wasted), unless that would
    /// leave less than the allowance itself.
    static func budget(deadlineMs: Int64, nowMs: Int64, defaultDeadline: Duration) -> Duration {
        var budget = defaultDeadline
        if deadlineMs > 0 { budget = min(budget, .milliseconds(max(0, deadlineMs - nowMs))) }
        if budget > replyAllowance * 2 { budget -= replyAllowance }
        return budget
    }
}
