import Foundation
import Hummingbird
import LedgerClient
import Logging
import NIOCore
import ServiceLifecycle
import StorekeeperCore
import VerifierPool
import ZeroMQ

/// Builds the services of `storekeeper-gateway`, the HTTP edge: the gateway's
/// end of the verifier pool, a client of the ledger, and the HTTP server; and
/// sizes the event loops they run on.
public enum GatewayApplication {
    public static let executableName = "storekeeper-gateway"

    /// Sizes NIO's event-loop group, which serves HTTP and, as the global
    /// executor, runs every task, to `STOREKEEPER_HTTP_THREADS` (default 1).
    /// Call first in `main`: `EventLoopExecutor.install()` makes the group.
    /// A bad value is left to the configuration check, which exits 78 naming it.
    /// It overrides NIO's own `NIO_SINGLETON_GROUP_LOOP_COUNT`.
    ///
    /// Why one by default: a request's task is resumed from a ZeroMQ socket's
    /// thread onto whichever loop is next, and with two loops about half the
    /// answers then crossed to the loop that owns the connection: a wake-up per
    /// request. One loop added 0.1-0.5 ms less at 700/s (bench/JOURNAL.md, "2026-11-28").
    public static func sizeEventLoops(_ reader: EnvironmentReader = EnvironmentReader()) {
        if let threads = try? GatewaySettings.threads(from: reader) {
            NIOSingletons.groupLoopCountSuggestion = threads
        }
    }

    /// The services to run, in start order (stopped in reverse: HTTP stops
    /// taking requests and finishes those in flight before the pool and the
    /// ledger client close).
    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        let configuration = context.configuration
        let logger = context.logger
        let zmq = ZMQContext()
        let pool = VerifierPoolClient(context: zmq, endpoint: configuration.endpoints.verifier, logger: logger)
        // Named, so that a ledger can answer here for a verifier (LedgerHandoff); unique per process.
        let route = ledgerRoute()
        let ledger = LedgerClient(
            context: zmq, endpoints: configuration.endpoints.ledgers, routingID: route, logger: logger,
            handedOverAnswers: { pool.deliverHandedOver($0, $1) })
        var orchestrator = ReceiptOrchestrator(
            verify: { try await pool.verify($0) }, ledger: ledger, verifyDeadline: configuration.apple.verifyDeadline)
        orchestrator.handOffRoute = .init(route: Data(route), ledgers: configuration.endpoints.ledgers)
        let router = GatewayRouter.make(
            .init(
                orchestrator: orchestrator, ledger: ledger,
                readiness: {
                    // Ready once a verifier can take work here, not merely when one is connected.
                    GatewayRouter.Readiness(
                        ledger: await ledger.ping(timeout: .milliseconds(500)), verifiers: pool.servingWorkerCount)
                },
                settings: configuration.gateway, sharedSecret: configuration.apple.sharedSecret,
                bundleIDs: configuration.apple.bundleIDs, metrics: context.metrics,
                acceptSandbox: configuration.apple.acceptSandbox))
        let address = configuration.gateway.httpAddress
        // A connection that sends no part of a request (headers or body) within the read time-out is
        // closed: slow-loris clients cannot hold connections open.
        let readTimeout = configuration.gateway.readTimeout
        let server = HTTPServerService(
            responder: router.buildResponder(), address: .hostname(address.host, port: address.port),
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(readTimeout.nanoseconds))), logger: logger)
        logger.info(
            "gateway configured",
            metadata: [
                "http.address": "\(address.host):\(address.port)", "pool.endpoint": "\(configuration.endpoints.verifier)",
                "ledger.endpoint": "\(configuration.endpoints.ledgers.joined(separator: ","))",
                "auth.api_keys": "\(configuration.gateway.apiKeys.count)",
                "http.threads": "\(configuration.gateway.httpThreads)",
            ])
        return [pool, ledger, server]
    }

    /// The ledger socket's ZeroMQ identity: random, as libzmq's own would be, and
    /// readable in a capture. (An identity must not start with a zero byte.)
    static func ledgerRoute() -> [UInt8] {
        Array("gateway-".utf8) + (0..<16).map { _ in UInt8.random(in: 0...255) }
    }
}
