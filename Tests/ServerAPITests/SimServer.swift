import Hummingbird
import Logging
import ServiceLifecycle

@testable import Simulator

/// The simulator's HTTP API (verifyReceipt, the Server API, the admin API) on
/// 127.0.0.1 and a port the kernel picks, for as long as `body` runs; then
/// shut down gracefully, whether `body` returned or threw. This file alone
/// imports Hummingbird, whose `HTTPRequest`/`HTTPResponse` would shadow CurlHTTP's.
enum SimServer {
    static func with<T: Sendable>(
        simulator: AppStoreSimulator, notifier: SimNotifier, tokens: SimTokenCheck, _ body: (Int) async throws -> T
    ) async throws -> T {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: SimRouter.make(simulator: simulator, notifier: notifier, tokens: tokens),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: Logger(label: "sim-test") { _ in SwiftLogNoOpLogHandler() })
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: Logger(label: "sim-test") { _ in SwiftLogNoOpLogHandler() }))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { portContinuation.finish() }
                try await group.run()
            }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let result: Result<T, any Error>
            if port > 0 {
                do { result = .success(try await body(port)) } catch { result = .failure(error) }
            } else {
                result = .failure(SimServerDidNotStart())
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try result.get()
        }
    }

    struct SimServerDidNotStart: Error {}
}
