import ServiceLifecycle

/// Asks a pool worker to leave its pool before the process stops: its
/// address left DNS (`PoolDiscovery`). Asked once; asking again does nothing.
final class LeaveRequest: Sendable {
    private let stream: AsyncStream<Never>
    private let continuation: AsyncStream<Never>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func ask() { continuation.finish() }

    /// Returns once leaving is asked for, here or by graceful shutdown of the
    /// process, whichever comes first; throws `CancellationError` when the
    /// task is cancelled first. Waited for by one task only.
    func wait() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await gracefulShutdown() }
            group.addTask {
                // The stream ends when asked, and also when this task is cancelled.
                for await _ in self.stream {}
                try Task.checkCancellation()
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}
