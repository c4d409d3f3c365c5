import AppleJWS
import Contracts
import CurlHTTP
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import Timekeeping
import VerifierPool
import X509
import ZeroMQ

/// Builds the services of `storekeeper-verifier`, one member of the verifier
/// pool: a libcurl client for Apple, the receipt verifier, and a pool worker
/// connected to each gateway (and to the ledger's refresh pool).
public enum VerifierApplication {
    public static let executableName = "storekeeper-verifier"

    /// What a verifier alone requires, checked before anything starts (exit 78
    /// naming the variable): a bundle list, a readable P-256 `.p8` key when
    /// the App Store Server API is configured, that API for `server_api`
    /// receipts, and a readable `STOREKEEPER_APPLE_CA_FILE` when set.
    public static func validate(_ configuration: StorekeeperConfiguration) throws {
        try configuration.apple.requireBundleIDs()
        _ = try configuration.apple.readableCAFile()
        _ = try ServerAPIClientConfiguration.load(configuration)
        try configuration.requireServerAPIForReceipts()
    }

    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        let settings = context.configuration.apple
        let client = CurlHTTPClient(
            // Up to one connection per call in flight: over HTTP/1.1 a lower per-host cap would queue
            // calls behind Apple's 3-6 s answers (over HTTP/2, which TLS agrees on with Apple, a
            // connection carries up to 100 calls at once).
            configuration: .init(
                maxConcurrentTransfers: settings.maxInFlight, maxConnectionsPerHost: settings.maxInFlight,
                maxResponseBytes: AppleCaller.maxResponseBytes, caFile: settings.caFile),
            logger: context.logger)
        let signedData = SignedDataReader(
            verifier: SignedDataVerifier(trustedRoots: try trustedRoots(settings)), bundleIDs: settings.bundleIDs,
            acceptSandbox: settings.acceptSandbox)
        let serverAPI = try ServerAPIClientConfiguration.load(context.configuration).map { configuration in
            AppStoreServerClient(configuration: configuration, reader: signedData, logger: context.logger) {
                request throws(HTTPClientError) in try await client.execute(request)
            }
        }
        let handler = VerifyRequestHandler(
            verifier: receiptVerifier(settings, serverAPI: serverAPI, client: client, logger: context.logger), signedData: signedData, serverAPI: serverAPI, defaultDeadline: settings.verifyDeadline)
        // Every gateway's pool, and the ledger's (for subscription refreshes). A host name stands
        // for every address it resolves to, looked up again every few seconds (PoolDiscovery).
        let endpoints = context.configuration.endpoints.verifiers + [context.configuration.endpoints.refresh]
        let zmq = ZMQContext()
        // One worker per pool address; the in-flight bound follows what each uses (CapacitySplit).
        let discovery = PoolDiscovery(endpoints: endpoints, maxInFlight: settings.maxInFlight, logger: context.logger) {
            endpoint, capacity in
            // Requests run on the curl loop's thread: most of their work is calls to Apple through it.
            PoolWorker(
                context: zmq, endpoint: endpoint, capacity: capacity, taskExecutor: client.taskExecutor,
                logger: context.logger, handler: handler.handle)
        }
        context.logger.info(
            "verifier configured",
            metadata: [
                "apple.production_url": "\(settings.productionURL)", "apple.sandbox_url": "\(settings.sandboxURL)",
                "apple.ca_file": "\(settings.caFile ?? "system")",
                "pool.endpoints": "\(endpoints.joined(separator: ","))", "pool.capacity": "\(settings.maxInFlight)",
                "apple.server_api": "\(serverAPI.map { "\($0.configuration.productionURL) key \($0.configuration.credentials.keyID)" } ?? "off")",
                "receipts.verification": "\(settings.receiptVerification.rawValue)",
            ])
        // Started in order, stopped in reverse: the workers leave their pools before the client stops.
        return [client, discovery]
    }

    /// The receipts' front door, its backend as `STOREKEEPER_RECEIPT_VERIFICATION` says.
    static func receiptVerifier(
        _ settings: AppleSettings, serverAPI: AppStoreServerClient?, client: CurlHTTPClient, logger: Logger
    ) -> ReceiptVerifier {
        // validate() refused server_api without the Server API.
        if settings.receiptVerification == .serverAPI, let serverAPI {
            return ReceiptVerifier(
                history: ServerAPIReceiptReader(
                    client: serverAPI, bundleIDs: settings.bundleIDs, acceptSandbox: settings.acceptSandbox),
                maxInFlight: settings.maxInFlight, logger: logger)
        }
        return ReceiptVerifier(settings: settings, logger: logger) { request throws(HTTPClientError) in
            try await client.execute(request)
        }
    }

    /// Apple Root CA - G3, plus the roots in `STOREKEEPER_JWS_EXTRA_ROOTS` (tests and the simulator only).
    public static func trustedRoots(_ settings: AppleSettings) throws -> [Certificate] {
        var texts: [String] = []
        for path in settings.jwsExtraRootFiles {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError(variable: ConfigurationVariable.jwsExtraRoots.rawValue, reason: "cannot read \(path)")
            }
            texts.append(text)
        }
        do {
            return try SignedDataVerifier.appleRoots(extraRootsPEM: texts)
        } catch {
            throw ConfigurationError(variable: ConfigurationVariable.jwsExtraRoots.rawValue, reason: "not PEM certificates")
        }
    }
}

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
            do {
                body = .verifyResult(try await signedData.transaction(request.signedTransaction, nowMs: nowMs))
            } catch {
                body = .failure(error)
            }
        case .transactionIDRequest(let request):
            body = await fetchTransaction(request.transactionID, by: deadline(of: envelope, nowMs: nowMs))
        case .signedNotificationRequest(let request):
            do {
                body = .notificationApply(
                    try await signedData.notification(request.signedPayload, receivedAtMs: request.receivedAtMs))
            } catch {
                body = .failure(error)
            }
        default:
            // The ledger's App Store Server API requests (its refresh pool), else nothing a verifier answers.
            body =
                await ServerAPIPoolRequests(client: serverAPI).answer(
                    envelope.body, deadline: deadline(of: envelope, nowMs: nowMs), nowMs: nowMs)
                ?? .failure(ServiceFailure(.internalError, message: "a verifier only answers verify requests"))
        }
        return Envelope(requestID: envelope.requestID, body: body)
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
