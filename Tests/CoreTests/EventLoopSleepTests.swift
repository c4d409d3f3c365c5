import TaskOutcome
import Testing

@testable import StorekeeperCore

// A broken cancellation would sleep for an hour: `outcome(of:within:)` turns that into a failure.
@Suite(.timeLimit(.minutes(1))) struct EventLoopSleepTests {
    @Test func sleepsAtLeastTheDuration() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        try await EventLoopExecutor.sleep(for: .milliseconds(50))
        #expect(clock.now - started >= .milliseconds(50))
    }

    /// The timer is armed when the task is cancelled: the cancellation handler
    /// cancels it and the sleep ends with `CancellationError`, not the timer's own error.
    @Test func cancellationEndsASleepUnderWay() async throws {
        let armed = AsyncStream<Void>.makeStream()
        let sleeper = Task {
            try await EventLoopExecutor.sleep(for: .seconds(3_600)) { armed.continuation.yield() }
        }
        for await _ in armed.stream { break }
        sleeper.cancel()
        guard case .failure(let error)? = await outcome(of: sleeper, within: .seconds(30)) else {
            Issue.record("a cancelled sleep went on (or ended without an error)")
            return
        }
        #expect(error is CancellationError)
    }

    @Test func aCancelledTaskDoesNotSleep() async throws {
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await EventLoopExecutor.sleep(for: .seconds(3_600))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
