import BenchmarkSupport
import Foundation
import Testing

@Suite struct IdleWaitTests {
    /// A child process running `script`, killed (and reaped) by `body`'s end. SIGKILL, not
    /// `terminate()`: a test runner may ignore SIGTERM, and its children inherit that.
    private func withChild<T>(_ script: String, _ body: (Int32) async throws -> T) async throws -> T {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", script]
        try child.run()
        defer {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        return try await body(child.processIdentifier)
    }

    @Test func aSleepingProcessIsIdleAtTheFirstWindow() async throws {
        let wait = try await withChild("exec sleep 30") { pid in
            await waitUntilIdle({ [pid] }, window: .milliseconds(300), limit: .seconds(10))
        }
        #expect(wait.idle)
        #expect(wait.waited < .seconds(3))
    }

    @Test func aBusyProcessIsWaitedForUntilTheLimit() async throws {
        let wait = try await withChild("while :; do :; done") { pid in
            await waitUntilIdle({ [pid] }, window: .milliseconds(300), limit: .milliseconds(1_200))
        }
        #expect(!wait.idle)
        #expect(wait.waited >= .milliseconds(1_200))
    }
}
