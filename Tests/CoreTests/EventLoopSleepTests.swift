import StorekeeperCore
import Testing

@Suite struct EventLoopSleepTests {
    @Test func sleepsAtLeastTheDuration() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        try await EventLoopExecutor.sleep(for: .milliseconds(50))
        #expect(clock.now - started >= .milliseconds(50))
    }

    @Test func cancellationEndsTheSleepWithCancellationError() async throws {
        let sleeper = Task { try await EventLoopExecutor.sleep(for: .seconds(3_600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aCancelledTaskDoesNotSleep() async throws {
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await EventLoopExecutor.sleep(for: .seconds(3_600))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
