import AppleJWS
import Contracts
import CurlHTTP
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
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
        var settings = context.configuration.apple
        let bound = CallsInFlightBound.effective(configured: settings.maxInFlight, openFileLimit: OpenFileLimit.current())
        if bound.lowered {
            context.logger.warning(
                "calls in flight lowered to what the open file limit holds",
                metadata: ["pool.capacity.configured": "\(settings.maxInFlight)", "pool.capacity": "\(bound.bound)"])
        }
        settings.maxInFlight = bound.bound
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
        // A gateway's receipts go from here to the ledgers when it asks (LedgerHandoff).
        let ledgers = LedgerHandoffSender(
            context: zmq, endpoints: context.configuration.endpoints.ledgers, logger: context.logger)
        // One worker per pool address; the in-flight bound follows what each uses (CapacitySplit).
        let discovery = PoolDiscovery(endpoints: endpoints, maxInFlight: settings.maxInFlight, logger: context.logger) {
            endpoint, capacity in
            // Requests run on the curl loop's thread: most of their work is calls to Apple through it.
            // So does the socket: a request wakes that thread alone.
            PoolWorker(
                context: zmq, endpoint: endpoint, capacity: capacity, taskExecutor: client.taskExecutor,
                socketHost: client, logger: context.logger, handOff: ledgers.handOff
            ) { request in
                ledgers.prepare(request)
                return await handler.handle(request)
            }
        }
        context.logger.info(
            "verifier configured",
            metadata: [
                "apple.production_url": "\(settings.productionURL)", "apple.sandbox_url": "\(settings.sandboxURL)",
                "apple.ca_file": "\(settings.caFile ?? "system")",
                "pool.endpoints": "\(endpoints.joined(separator: ","))", "pool.capacity": "\(settings.maxInFlight)",
                "ledger.endpoint": "\(context.configuration.endpoints.ledgers.joined(separator: ","))",
                "apple.server_api": "\(serverAPI.map { "\($0.configuration.productionURL) key \($0.configuration.credentials.keyID)" } ?? "off")",
                "receipts.verification": "\(settings.receiptVerification.rawValue)",
            ])
        // Started in order, stopped in reverse: the workers leave their pools before the client and
        // the ledgers' socket stop.
        return [client, ledgers, discovery]
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
