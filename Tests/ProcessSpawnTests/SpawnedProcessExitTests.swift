import Foundation
@testable import ProcessSpawn
import Testing

@Suite struct SpawnedProcessExitTests {
    private func spawn(_ script: String) throws -> SpawnedProcess {
        try SpawnedProcess(path: "/bin/sh", arguments: ["-c", script], environment: [:], onOutput: { _ in })
    }

    /// What `operation` returns, or nil when it took more than 10 s (a wait
    /// that never ends fails the test instead of hanging it).
    private func bounded<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    @Test func exitedReturnsTheStatusOnceTheChildEnds() async throws {
        let child = try spawn("sleep 0.2; exit 3")
        #expect(child.isRunning)
        #expect(try await bounded { try await child.exited() } == 3)
        #expect(!child.isRunning)
        // Once exited, every later wait returns at once with the same status.
        #expect(try await child.exited() == 3)
    }

    @Test func aSignalIsReportedAsTheShellReportsIt() async throws {
        let child = try spawn("exec sleep 60")
        child.signal(SIGKILL)
        #expect(try await bounded { try await child.exited() } == 128 + SIGKILL)
    }

    @Test func aCancelledWaitThrowsAndLeavesTheChildRunning() async throws {
        let child = try spawn("exec sleep 60")
        let waiting = Task { try await child.exited() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(child.isRunning)
        #expect(await child.stop(grace: .seconds(5)) == 128 + SIGTERM)
        #expect(try await child.exited() == 128 + SIGTERM)
    }

    /// A child's watch is a thread asleep in `waitid`. Dropping the child
    /// kills and reaps it, and the watch must wake then (and its thread end),
    /// or a supervisor that restarts children would gather sleeping threads.
    @Test func aWatchWakesWhenItsChildIsKilledAndReaped() async throws {
        var child: SpawnedProcess? = try spawn("exec sleep 60")
        let watch = ExitWatch()
        #expect(watch.start(watching: child!.pid))
        child = nil
        #expect(try await bounded { try await watch.wait() } != nil)
    }
}
