import Foundation
import ProcessSpawn
import Synchronization
import Testing

@Suite struct SpawnedProcessDescriptorTests {
    /// A descriptor the parent holds without close-on-exec does not reach the child, as with
    /// Foundation's `Process`; the child's standard output still does.
    @Test func aDescriptorWithoutCloseOnExecStaysWithTheParent() async throws {
        let descriptor = open("/dev/null", O_RDONLY)
        try #require(descriptor > 2)
        defer { close(descriptor) }
        try #require(fcntl(descriptor, F_GETFD) & FD_CLOEXEC == 0)
        let output = Mutex("")
        let child = try SpawnedProcess(
            path: "/bin/sh", arguments: ["-c", "if [ -e /proc/self/fd/\(descriptor) ]; then echo inherited; else echo closed; fi"],
            environment: [:], onOutput: { chunk in output.withLock { $0 += String(decoding: chunk, as: UTF8.self) } })
        #expect(await child.waitForExit(timeout: .seconds(30)) == 0)
        #expect(output.withLock { $0 } == "closed\n")
    }

    /// The blocking wait (for synchronous clean-up) returns the status, and later waits agree.
    @Test func waitUntilExitBlocksUntilTheChildEnds() throws {
        let child = try SpawnedProcess(
            path: "/bin/sh", arguments: ["-c", "sleep 0.2; exit 4"], environment: [:], onOutput: { _ in })
        #expect(child.waitUntilExit() == 4)
        #expect(!child.isRunning)
        #expect(child.status == 4)
        #expect(child.waitUntilExit() == 4)  // reaped already: at once, the same status
    }
}
