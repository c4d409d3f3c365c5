import Logging
import OSThread
import ServiceLifecycle

/// An HTTP client over libcurl's multi interface: one loop on one dedicated
/// thread drives every transfer of the client (one client per process is
/// the intent), and the multi handle's connection cache keeps connections,
/// TLS ones included, alive between transfers.
///
/// A `Service`: put it in the `ServiceGroup` before the services that use it,
/// so it starts first and stops last. `execute` may be called before `run()`
/// starts (requests wait in the queue) and from any number of tasks at once.
///
/// ```swift
/// let client = CurlHTTPClient(configuration: .init(), logger: logger)
/// // ServiceGroup(services: [client, verifier], ...)
/// let response = try await client.execute(HTTPRequest(method: .post, url: url, body: body))
/// ```
public final class CurlHTTPClient: Service, DescriptorHost, Sendable {
    public let configuration: Configuration
    private let logger: Logger
    private let shared: SharedState
    private let executor: CurlLoopExecutor

    /// Runs tasks on the loop's thread, for work that is mostly calls to
    /// this client: `withTaskExecutorPreference(client.taskExecutor) { ... }`
    /// saves two thread hand-offs per call (see `CurlLoopExecutor`). Such work
    /// must not block, or every transfer waits.
    public var taskExecutor: any TaskExecutor { executor }

    public init(configuration: Configuration = Configuration(), logger: Logger) {
        configuration.validate()
        // The process-wide init runs here, before any thread can touch curl.
        _ = CurlGlobal.isInitialized
        self.configuration = configuration
        self.logger = logger
        shared = SharedState()
        executor = CurlLoopExecutor(shared: shared)
    }

    /// Runs the curl loop on its own thread until graceful shutdown or
    /// cancellation of the calling task. On the way out every request still
    /// queued or in flight fails with `.shutdown`, and so does any later one.
    ///
    /// Returns normally when stopped; throws `HTTPClientError.loopFailed`
    /// when curl cannot be initialised or its multi interface fails (a
    /// `ServiceGroup` then shuts the process down). Call it once.
    public func run() async throws {
        shared.start()
        let failure = await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await runLoopThread()
            } onCancel: {
                self.shared.requestStop()
            }
        } onGracefulShutdown: {
            self.shared.requestStop()
        }
        if let failure { throw failure }
    }

    /// Sends `request` and waits for the whole response. Any HTTP status is a
    /// response; only failures to get one throw. Before `run()` starts, or
    /// while `maxConcurrentTransfers` are running, the request waits in the
    /// queue; after `run()` has ended it fails with `.shutdown` at once.
    ///
    /// Cancelling the calling task removes the transfer from curl (closing its
    /// connection) and throws `.cancelled` without waiting for the loop.
    public func execute(_ request: HTTPRequest) async throws(HTTPClientError) -> HTTPResponse {
        guard request.isWellFormed else { throw .invalidRequest }
        guard request.hasTimeLeft else { throw .timedOut }
        let shared = self.shared
        let id = shared.register()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                shared.enqueue(
                    QueuedRequest(id: id, request: request, enqueuedAt: .now), continuation: continuation)
            }
        } onCancel: {
            shared.cancel(id: id)
        }
        return try result.get()
    }

    /// Serves `guest` in the loop's turns (`DescriptorHost`): a verifier's
    /// pool sockets, whose requests run on this loop anyway
    /// (`taskExecutor`). Its descriptors wake the loop as curl's sockets do,
    /// and a guest still attached when the loop stops is detached then.
    /// Must not block, like anything on the loop. Adopted before `run()`, it
    /// is attached when the loop starts; false once the loop has stopped.
    public func adopt(_ guest: any DescriptorGuest) -> Bool {
        shared.adopt(guest)
    }

    /// Requests waiting for a transfer slot (for tests and diagnostics).
    var queuedRequestCount: Int { shared.queuedCount }

    /// Starts the loop thread and waits, without blocking a pool thread, until it ends.
    private func runLoopThread() async -> HTTPClientError? {
        let (shared, executor, configuration, logger) = (self.shared, self.executor, self.configuration, self.logger)
        guard CurlGlobal.isInitialized else {
            logger.error("curl_global_init failed")
            shared.finish()
            return .loopFailed
        }
        logger.info("curl loop starting", metadata: ["curl.version": "\(CurlGlobal.version)"])
        return await withCheckedContinuation { (continuation: CheckedContinuation<HTTPClientError?, Never>) in
            let started = OSThread.start(name: "curl-loop") {
                guard let loop = MultiLoop(shared: shared, executor: executor, configuration: configuration, logger: logger)
                else {
                    logger.error("curl_multi_init or epoll failed")
                    shared.finish()
                    continuation.resume(returning: .loopFailed)
                    return
                }
                if let code = loop.run() {
                    logger.error("curl multi loop failed", metadata: ["curl.multi_code": "\(code.rawValue)"])
                    continuation.resume(returning: .loopFailed)
                } else {
                    logger.info("curl loop stopped")
                    continuation.resume(returning: nil)
                }
            }
            if !started {
                logger.error("could not start the curl loop thread")
                shared.finish()
                continuation.resume(returning: .loopFailed)
            }
        }
    }
}
