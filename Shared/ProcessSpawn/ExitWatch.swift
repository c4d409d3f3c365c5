import OSThread
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Tells waiting tasks that a child process has exited, without polling: a
/// thread of its own sleeps in `waitid` until the kernel reports the exit.
///
/// The thread waits with `WNOWAIT`, so the child stays a zombie and its status
/// is still collected by `SpawnedProcess`' one reaper (`waitpid`): nothing here
/// competes for it. The thread holds the pid and this watch, never the
/// `SpawnedProcess`, so dropping that still kills and reaps the child, which
/// ends the thread. A supervisor awaiting this sleeps until a child dies
/// instead of waking ten times a second per child to ask.
final class ExitWatch: Sendable {
    private struct State: ~Copyable {
        var exited = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    }

    private let state = Mutex(State())

    /// Starts the watching thread; false when no thread could be started.
    func start(watching pid: pid_t) -> Bool {
        OSThread.start(name: "spawn-exit") { [self] in
            Self.sleepUntilExit(of: pid)
            fire()
        }
    }

    /// Blocks the calling thread until `pid` has exited, leaving it waitable
    /// (`WNOWAIT`) for the one reaper; at once when it is gone already.
    static func sleepUntilExit(of pid: pid_t) {
        var info = siginfo_t()
        // EINTR: a signal came first. Anything else (ECHILD: reaped already) means gone too.
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
    }

    /// Returns once the child has exited (at once if it has). Throws
    /// `CancellationError` when the task is cancelled first.
    func wait() async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.exited { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// The child has exited: every waiter, now and later, returns.
    func fire() {
        let waiters = state.withLock { state in
            state.exited = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}
