import Foundation
import Synchronization

/// One of the project's executables started as a real process by a test,
/// with its output captured. The test that starts it stops it (`stop()`);
/// `deinit` kills it as a last resort so no process outlives a failed test.
///
/// Spawned with posix_spawn rather than Foundation's Process, whose `run()`
/// was seen crashing when tests start processes while other threads work.
final class ChildProcess: Sendable {
    let pid: pid_t
    let name: String
    private let output = OutputBuffer()
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` (a product name, e.g. `storekeeper-ledger`) from the build folder.
    init(_ executable: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        let path = BuildProducts.url(of: executable).path
        // Only what the test gives plus PATH: the test machine's own STOREKEEPER_* must not leak in.
        var variables = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        variables.merge(environment) { $1 }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0)=\($1)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        close(fds[1])
        guard result == 0 else {
            close(fds[0])
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT)
        }
        self.pid = pid
        self.name = executable
        let output = self.output
        let reader = fds[0]
        // A plain thread drains the pipe until the child closes it (exits).
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(reader, &buffer, buffer.count)
                if count <= 0 { break }
                output.append(Data(buffer[0..<count]))
            }
            close(reader)
        }
    }

    deinit {
        if isRunning { kill(pid, SIGKILL) }
        _ = reap(blocking: true)
    }

    var captured: String { output.text }
    var isRunning: Bool { reap(blocking: false) == nil }

    /// The exit status once the child has ended (128+N when a signal N ended it), else nil.
    private func reap(blocking: Bool) -> Int32? {
        exitStatus.withLock { known in
            if let known { return known }
            var status: Int32 = 0
            guard waitpid(pid, &status, blocking ? 0 : WNOHANG) == pid else { return nil }
            let low = status & 0x7f
            known = low == 0 ? (status >> 8) & 0xff : 128 + low
            return known
        }
    }

    /// Waits, up to `timeout`, until the output contains `text`; false if it never does.
    func waitForOutput(containing text: String, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if captured.contains(text) { return true }
            if !isRunning {
                try? await Task.sleep(for: .milliseconds(100))  // let the reader take the last output
                return captured.contains(text)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Waits, up to `timeout`, for the process to exit; its status, or nil if it is still running.
    func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = reap(blocking: false) {
                try? await Task.sleep(for: .milliseconds(100))  // let the reader take the last output
                return status
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return reap(blocking: false)
    }

    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL if it has not exited in time; the exit status of the graceful stop.
    @discardableResult
    func stop(timeout: Duration = .seconds(30)) async -> Int32? {
        if let status = reap(blocking: false) { return status }
        signal(SIGTERM)
        if let status = await waitForExit(timeout: timeout) {
            if status != 0 { reportOutput(because: "exited with status \(status) on SIGTERM") }
            return status
        }
        signal(SIGKILL)
        _ = await waitForExit(timeout: .seconds(5))
        reportOutput(because: "did not exit within \(timeout) of SIGTERM")
        return nil
    }

    /// Prints the end of what the child wrote, so that a failed stop can be diagnosed from CI's log.
    private func reportOutput(because reason: String) {
        let tail = captured.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
        print("[\(name) \(reason); its last output:]\n\(tail)")
    }
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

/// A loopback TCP port nobody listens on right now.
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
    return Int(UInt16(bigEndian: address.sin_port))
}
