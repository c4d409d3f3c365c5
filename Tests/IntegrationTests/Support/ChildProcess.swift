import Foundation
import Synchronization

/// One of the project's executables started as a real process by a test,
/// with its output captured. The test that starts it stops it (`stop()`);
/// `deinit` kills it as a last resort so no process outlives a failed test.
final class ChildProcess: Sendable {
    private let process: Process
    private let output = OutputBuffer()

    /// Starts `executable` (a product name, e.g. `storekeeper-ledger`) from the build folder.
    init(_ executable: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = BuildProducts.url(of: executable)
        process.arguments = arguments
        // Only what the test gives plus PATH: the test machine's own STOREKEEPER_* must not leak in.
        var base = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        base.merge(environment) { $1 }
        process.environment = base
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        self.process = process
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { output.append(data) }
        }
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var captured: String { output.text }
    var isRunning: Bool { process.isRunning }

    /// Waits, up to `timeout`, until the output contains `text`; false if it never does.
    func waitForOutput(containing text: String, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if captured.contains(text) { return true }
            if !process.isRunning { return captured.contains(text) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Waits, up to `timeout`, for the process to exit; its status, or nil if it is still running.
    func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// SIGTERM, then SIGKILL if it has not exited in time; the exit status of the graceful stop.
    @discardableResult
    func stop(timeout: Duration = .seconds(30)) async -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        signal(SIGTERM)
        if let status = await waitForExit(timeout: timeout) { return status }
        signal(SIGKILL)
        _ = await waitForExit(timeout: .seconds(5))
        return nil
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
