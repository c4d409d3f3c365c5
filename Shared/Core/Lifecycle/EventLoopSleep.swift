import NIOCore
import NIOPosix

extension EventLoopExecutor {
    /// `Task.sleep(for:)` with the timer on one of NIO's event loops.
    ///
    /// `install()` hands Swift's global executor to the event loops, but not
    /// its delayed jobs: `Task.sleep` still arms a Dispatch timer, and the task
    /// then resumes on a Dispatch worker thread, which hands every write back
    /// to an event loop. That is two thread wake-ups per sleep more than a
    /// timer on the loop. The simulator sleeps once per verifyReceipt to play
    /// Apple's latency, and in the stack benchmark those Dispatch threads were
    /// a fifth of its CPU.
    ///
    /// Throws `CancellationError` when the task is cancelled before the time
    /// is up, like `Task.sleep`.
    public static func sleep(for duration: Duration) async throws {
        try await sleep(for: duration, armed: {})
    }

    /// `sleep(for:)`, calling `armed` once the timer is set and its cancellation
    /// handler installed (tests cancel a sleep under way).
    static func sleep(for duration: Duration, armed: () -> Void) async throws {
        try Task.checkCancellation()
        let loop = NIOSingletons.posixEventLoopGroup.any()
        let timer = loop.scheduleTask(in: TimeAmount(duration)) {}
        do {
            try await withTaskCancellationHandler {
                armed()
                try await timer.futureResult.get()
            } onCancel: {
                timer.cancel()
            }
        } catch EventLoopError.cancelled {
            throw CancellationError()
        }
    }
}
