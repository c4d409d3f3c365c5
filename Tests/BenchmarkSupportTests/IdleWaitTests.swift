import BenchmarkSupport
import Foundation
import ProcessSpawn
import Testing

@Suite struct IdleWaitTests {
    /// A child process running `script`, killed with SIGKILL by `body`'s end (no grace to wait
    /// for: the busy child would spend it spinning) and reaped as it is released. Not Foundation's
    /// `Process`: `SpawnedProcess` says why.
    private func withChild<T>(_ script: String, _ body: (Int32) async throws -> T) async throws -> T {
        let child = try SpawnedProcess(
            path: "/bin/sh", arguments: ["-c", script], environment: ["PATH": "/usr/bin:/bin"], onOutput: { _ in })
        defer { child.signal(SIGKILL) }
        return try await body(child.pid)
    }

    // No bound on how soon: on a loaded machine (CI runs the tests in parallel) a window's
    // sleep can last far longer than asked. What is checked is the verdict.

    @Test func aSleepingProcessIsFoundIdle() async throws {
        let wait = try await withChild("exec sleep 120") { pid in
            await waitUntilIdle({ [pid] }, window: .milliseconds(300), limit: .seconds(60))
        }
        #expect(wait.idle)
    }

    /// Busy: 1 % of a core, which a spinning process gets however many threads share the machine.
    @Test func aBusyProcessIsWaitedForUntilTheLimit() async throws {
        let wait = try await withChild("while :; do :; done") { pid in
            await waitUntilIdle({ [pid] }, window: .milliseconds(300), limit: .milliseconds(1_200), busyShare: 0.01)
        }
        #expect(!wait.idle)
        #expect(wait.waited >= .milliseconds(1_200))
    }
}
