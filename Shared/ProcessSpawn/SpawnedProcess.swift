import Foundation
import OSThread
import Synchronization
import Timekeeping

/// A child process started with posix_spawn, its standard output and error
/// on one pipe handed to `onOutput` as they arrive.
///
/// posix_spawn rather than Foundation's Process, anywhere in the project (the
/// tests and benchmarks too): on Linux `Process.run()` lists /proc/self/fd and
/// copies each entry's name as a whole 256-byte `d_name`, reading past the end
/// of readdir's buffer (AddressSanitizer: heap-buffer-overflow in
/// `findMaximumOpenFromProcSelfFD`; swift-corelibs-foundation PR 5472, not in
/// Swift 6.3.1). In a process holding many descriptors (a parallel test run
/// holds over a thousand) that read sometimes crosses into an unmapped page:
/// SIGSEGV.
public final class SpawnedProcess: Sendable {
    public let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)
    private let outputDrained = DrainedFlag()
    private let exitWatch = ExitWatch()

    /// Starts `path` with exactly `environment` (the caller decides what is inherited).
    /// `onOutput` runs on a reader thread, once per chunk read, until the child closes the pipe.
    /// With `ownProcessGroup` the terminal's Ctrl-C reaches only the parent, which then stops
    /// its children in its own order.
    public init(
        path: String, arguments: [String] = [], environment: [String: String], ownProcessGroup: Bool = false,
        onOutput: @escaping @Sendable (Data) -> Void
    ) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        // Close-on-exec: a child started later must not inherit this child's pipe (its reader
        // would never see the end). dup2 onto 1 and 2 clears the flag there. (pipe2 is not in
        // Swift's Glibc module.)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        closeInheritedDescriptors(in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The spawning thread may block signals or ignore some (SIGPIPE): the child starts clean.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        close(fds[1])
        guard result == 0 else {
            close(fds[0])
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT)
        }
        self.pid = pid
        let reader = fds[0]
        guard exitWatch.start(watching: pid) else {
            // Nobody could tell when it ends: no half-watched child is left behind.
            close(reader)
            kill(pid, SIGKILL)
            _ = waitpid(pid, nil, 0)
            throw POSIXError(.EAGAIN)
        }
        let drained = outputDrained
        let started = OSThread.start(name: "spawn-output") {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(reader, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                onOutput(Data(buffer[0..<count]))
            }
            close(reader)
            drained.set()
        }
        if !started {
            // Nobody would read the output: with the read end closed the child's writes fail
            // (EPIPE, or SIGPIPE) instead of blocking it for good once the pipe is full.
            close(reader)
            drained.set()
        }
    }

    deinit {
        if isRunning { kill(pid, SIGKILL) }
        _ = reap(blocking: true)
    }

    public var isRunning: Bool { reap(blocking: false) == nil }

    /// The exit status once the child has ended (128+N when signal N ended it), else nil.
    public var status: Int32? { reap(blocking: false) }

    /// Returns once the child has exited, with its status (as `status`; nil
    /// only when something else reaped it). No polling: a thread sleeps until
    /// the kernel reports the exit (`ExitWatch`). Throws `CancellationError`
    /// when the task is cancelled first.
    public func exited() async throws -> Int32? {
        try await exitWatch.wait()
        return reap(blocking: false)
    }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits, up to `timeout`, for the child to exit and its output to be read; its status, or nil.
    /// Waits on the exit watch, not by asking again and again; in a task the caller's
    /// cancellation does not reach, since stopping a child is what a cancelled supervisor
    /// still has to do.
    public func waitForExit(timeout: Duration) async -> Int32? {
        let watch = exitWatch
        let exited = await Task {
            await withTaskGroup(of: Bool.self) { group in
                group.addTask { (try? await watch.wait()) != nil }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
        }.value
        guard exited, let status = reap(blocking: false) else { return reap(blocking: false) }
        // The pipe may still hold the last lines (a grandchild can keep it open: bounded).
        for _ in 0..<50 where !outputDrained.isSet {
            await Self.pause(.milliseconds(10))
        }
        return status
    }

    /// Sleeps even in a cancelled task: stopping a child is what a cancelled
    /// supervisor still has to do, and `Task.sleep` would return at once and spin.
    /// The sleep runs in a task of its own, which the caller's cancellation does
    /// not reach, so the thread is free meanwhile: blocking it instead (`usleep`)
    /// held a thread of a 2-thread pool for a child's whole grace period, and two
    /// supervisors stopping slow children stalled every other task of the process.
    private static func pause(_ duration: Duration) async {
        if Task.isCancelled {
            await Task { try? await Task.sleep(for: duration) }.value
        } else {
            try? await Task.sleep(for: duration)
        }
    }

    /// Blocks the calling thread until the child has exited; its status (nil only when something
    /// else reaped it). For synchronous clean-up (the benchmarks'), never on a task's thread in a
    /// service. Waits as `ExitWatch` does, outside the lock, so other calls on this process are
    /// not held meanwhile.
    @discardableResult
    public func waitUntilExit() -> Int32? {
        // Reaped already: its pid may be another child's by now, whose exit this must not await.
        if let status = reap(blocking: false) { return status }
        ExitWatch.sleepUntilExit(of: pid)
        return reap(blocking: false)
    }

    /// Sends `signal` and blocks until the child has exited (`waitUntilExit`): the benchmarks'
    /// synchronous stop, with no grace period.
    @discardableResult
    public func terminateAndWait(signal number: Int32 = SIGTERM) -> Int32? {
        signal(number)
        return waitUntilExit()
    }

    /// SIGTERM, then SIGKILL when it has not exited within `grace`; the status of the graceful
    /// stop, or nil when it had to be killed.
    public func stop(grace: Duration) async -> Int32? {
        if let status = reap(blocking: false) { return status }
        signal(SIGTERM)
        if let status = await waitForExit(timeout: grace) { return status }
        signal(SIGKILL)
        _ = await waitForExit(timeout: .seconds(5))
        return nil
    }

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
}

/// Set by the reader thread once the child's output pipe is closed.
private final class DrainedFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
