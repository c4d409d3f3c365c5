import Foundation
import ProcessSpawn
import StorekeeperCore
import Synchronization

/// One of the project's executables started as a real process by a test,
/// with its output captured. The test that starts it stops it (`stop()`);
/// the process is killed when this is released, as a last resort, so no
/// process outlives a failed test.
final class ChildProcess: Sendable {
    let name: String
    private let process: SpawnedProcess
    private let output = OutputBuffer()

    var pid: pid_t { process.pid }

    /// Starts `executable` (a product name, e.g. `storekeeper-ledger`) from the build folder;
    /// with `openFileSoftLimit` or `openFileLimit`, through `sh`, which first lowers its soft limit
    /// on open files, or both its soft and hard limits.
    init(
        _ executable: String, arguments: [String] = [], environment: [String: String] = [:],
        openFileSoftLimit: Int? = nil, openFileLimit: Int? = nil
    ) throws {
        // Only what the test gives plus PATH: the test machine's own STOREKEEPER_* must not leak in.
        var variables = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        variables.merge(environment) { $1 }
        let output = self.output
        var (path, arguments) = (BuildProducts.url(of: executable).path, arguments)
        let limit = openFileLimit.map { "ulimit -n \($0)" } ?? openFileSoftLimit.map { "ulimit -Sn \($0)" }
        if let limit {
            // `exec` keeps the pid: the test's process is the executable itself.
            (path, arguments) = ("/bin/sh", ["-c", "\(limit) && exec \"$0\" \"$@\"", path] + arguments)
        }
        process = try SpawnedProcess(
            path: path, arguments: arguments, environment: variables, onOutput: { output.append($0) })
        name = executable
    }

    var captured: String { output.text }
    var isRunning: Bool { process.isRunning }

    /// Waits, up to `timeout`, until the output contains `text`; false if it never does.
    func waitForOutput(containing text: String, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if captured.contains(text) { return true }
            if !isRunning {
                _ = await process.waitForExit(timeout: .seconds(1))  // let the reader take the last output
                return captured.contains(text)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Waits, up to `timeout`, for the process to exit; its status, or nil if it is still running.
    func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        await process.waitForExit(timeout: timeout)
    }

    /// For a process expected to exit by itself (a bad setting): its status, or nil when it
    /// was still running after `timeout`, in which case it is stopped, not left behind.
    func waitForOwnExit(timeout: Duration = .seconds(30)) async -> Int32? {
        let status = await waitForExit(timeout: timeout)
        if status == nil { await stop() }
        return status
    }

    func signal(_ signal: Int32) { process.signal(signal) }

    /// SIGTERM, then SIGKILL if it has not exited in time; the exit status of the graceful stop.
    @discardableResult
    func stop(timeout: Duration = .seconds(30)) async -> Int32? {
        let status = await process.stop(grace: timeout)
        if status != 0 {
            reportOutput(because: status.map { "exited with status \($0)" } ?? "did not exit within \(timeout) of SIGTERM")
        }
        return status
    }

    /// Prints the end of what the child wrote, so that a failed stop can be diagnosed from CI's log.
    private func reportOutput(because reason: String) {
        let tail = captured.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
        print("[\(name) \(reason); its last output:]\n\(tail)")
    }
}

/// A system tool a test runs to its end (`prlimit`, `ss`): its output, or why it failed.
/// Not with Foundation's `Process`, which crashed the test run here: `SpawnedProcess` says why.
@discardableResult
func runTool(_ path: String, _ arguments: [String]) async throws -> String {
    let output = OutputBuffer()
    let tool = try SpawnedProcess(path: path, arguments: arguments, environment: [:], onOutput: { output.append($0) })
    let status = await tool.waitForExit(timeout: .seconds(30))
    guard status == 0 else { throw ToolFailed(command: ([path] + arguments).joined(separator: " "), status: status, output: output.text) }
    return output.text
}

struct ToolFailed: Error {
    let command: String
    /// nil: it did not end within 30 s.
    let status: Int32?
    let output: String
}

/// What a child wrote so far, filled from the pipe's reader thread.
final class OutputBuffer: Sendable {
    private let buffer = Mutex("")
    func append(_ data: Data) { buffer.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    var text: String { buffer.withLock { $0 } }
}

/// Where `swift build` put the executables: beside the test bundle.
enum BuildProducts {
    static func url(of executable: String) -> URL {
        if let directory = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_BIN_DIR"] {
            return URL(fileURLWithPath: directory).appendingPathComponent(executable)
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On Linux the test runner is `<bin>/storekeeperPackageTests.xctest`; on macOS it sits inside the bundle.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(executable).path),
            directory.pathComponents.count > 1
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(executable)
    }
}

/// A loopback TCP port nobody listens on right now, for a test to hand to a
/// process it starts. Handed out once per test run, so two tests never get the
/// same one, and below the kernel's ephemeral range, where outgoing
/// connections take their ports.
/// The first of `count` free consecutive ports (`storekeeper up --gateways N` listens on such a run).
func freeLoopbackPort(consecutive count: Int) throws -> Int {
    guard count > 1 else { return try freeLoopbackPort() }
    for _ in 0..<PortAllocator.span {
        let first = PortAllocator.next()
        // The allocator hands the next ports out in turn: take them, so nobody else gets them.
        let rest = (1..<count).map { _ in PortAllocator.next() }
        if rest == Array(first + 1..<first + count), (first..<first + count).allSatisfy(canBindLoopback) { return first }
    }
    throw POSIXError(.EADDRNOTAVAIL)
}

/// `extra` on loopback addresses of its own (HTTP, simulator, the five ZeroMQ endpoints) and a
/// fresh data directory: a process started on the defaults (port 8080, tcp://127.0.0.1:7420-7424,
/// ./data) collides with any stack running beside the tests.
func isolatedEnvironment(_ extra: [String: String] = [:]) throws -> [String: String] {
    var environment = [
        "STOREKEEPER_HTTP_ADDR": "127.0.0.1:\(try freeLoopbackPort())",
        "STOREKEEPER_SIM_ADDR": "127.0.0.1:\(try freeLoopbackPort())",
        "STOREKEEPER_DATA_DIR": FileManager.default.temporaryDirectory
            .appendingPathComponent("storekeeper-test-\(UUID().uuidString)").path,
    ]
    for name in ["EVENTS", "VERIFIER", "LEDGER", "REPLAY", "REFRESH"] {
        environment["STOREKEEPER_\(name)_ENDPOINT"] = "tcp://127.0.0.1:\(try freeLoopbackPort())"
    }
    return environment.merging(extra) { $1 }
}

func freeLoopbackPort() throws -> Int {
    for _ in 0..<PortAllocator.span {
        let port = PortAllocator.next()
        if canBindLoopback(port) { return port }
    }
    throw POSIXError(.EADDRNOTAVAIL)
}

enum PortAllocator {
    static let low = 20_000
    /// Up to where the ephemeral range starts (32768 by default on Linux).
    static let high: Int = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let start = text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
        return max(low + 1_000, min(start, 65_000))
    }()
    static var span: Int { high - low }
    /// Starts at a random place, so test runs side by side rarely meet.
    private static let cursor = Mutex(Int.random(in: 0..<1_000_000))

    static func next() -> Int {
        low + cursor.withLock { cursor in
            cursor += 1
            return cursor % span
        }
    }
}

/// Close-on-exec: tests start processes from other threads at any moment, and
/// a child that inherited this probe would keep the port bound for its whole
/// life, so the process the port was chosen for fails with "Address already in
/// use" (seen in CI, in about one run of three).
private func canBindLoopback(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
