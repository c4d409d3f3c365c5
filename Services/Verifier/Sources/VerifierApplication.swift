import Contracts
import CurlHTTP
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import VerifierPool
import ZeroMQ

/// Builds the services of `storekeeper-verifier`, one member of the verifier
/// pool: a libcurl client for Apple, the receipt verifier, and a pool worker
/// connected to the gateway's verifier endpoint.
public enum VerifierApplication {
    public static let executableName = "storekeeper-verifier"

    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        let settings = context.configuration.apple
        let client = CurlHTTPClient(
            // One connection per call in flight: verifyReceipt is HTTP/1.1, so a lower per-host cap
            // would queue calls behind Apple's 3-6 s answers.
            configuration: .init(
                maxConcurrentTransfers: settings.maxInFlight, maxConnectionsPerHost: settings.maxInFlight,
                maxResponseBytes: AppleCaller.maxResponseBytes),
            logger: context.logger)
        let verifier = ReceiptVerifier(settings: settings, logger: context.logger) { request throws(HTTPClientError) in
            try await client.execute(request)
        }
        let handler = VerifyRequestHandler(verifier: verifier, defaultDeadline: settings.verifyDeadline)
        // Every gateway's pool, and the ledger's (for subscription refreshes).
        let endpoints = context.configuration.endpoints.verifiers + [context.configuration.endpoints.refresh]
        let zmq = ZMQContext()
        // One worker per pool; the in-flight bound is shared between them.
        let workers = endpoints.map { endpoint in
            PoolWorker(
                context: zmq, endpoint: endpoint, capacity: max(1, settings.maxInFlight / endpoints.count),
                logger: context.logger, handler: handler.handle)
        }
        context.logger.info(
            "verifier configured",
            metadata: [
                "apple.production_url": "\(settings.productionURL)", "apple.sandbox_url": "\(settings.sandboxURL)",
                "pool.endpoints": "\(endpoints.joined(separator: ","))", "pool.capacity": "\(settings.maxInFlight)",
            ])
        // Started in order, stopped in reverse: the worker leaves the pool before the client stops.
        return [client] + workers
    }
}

/// Turns a pool request envelope into the verify answer envelope.
struct VerifyRequestHandler: Sendable {
    /// Kept back from the deadline for the answer's way back through the pool.
    static let replyAllowance: Duration = .milliseconds(250)

    let verifier: ReceiptVerifier
    let defaultDeadline: Duration

    func handle(_ envelope: Envelope) async -> Envelope {
        guard case .verifyRequest(let request) = envelope.body else {
            return Envelope(
                requestID: envelope.requestID,
                body: .failure(ServiceFailure(.internalError, message: "a verifier only answers verify requests")))
        }
        // The envelope's absolute deadline, when it is sooner than our own default, less
        // the time the answer needs to travel back: an answer after the deadline is wasted.
        let nowMs = Int64(Date().timeIntervalSince1970 * 1_000)
        var budget = defaultDeadline
        if envelope.deadlineMs > 0 { budget = min(budget, .milliseconds(max(0, envelope.deadlineMs - nowMs))) }
        if budget > Self.replyAllowance * 2 { budget -= Self.replyAllowance }
        let result = await verifier.verify(request, deadline: .now + budget, requestID: envelope.requestID)
        switch result {
        case .success(let verified):
            return Envelope(requestID: envelope.requestID, body: .verifyResult(verified))
        case .failure(let failure):
            return Envelope(requestID: envelope.requestID, body: .failure(failure.serviceFailure))
        }
    }
}
