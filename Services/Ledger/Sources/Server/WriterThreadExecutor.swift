import DequeModule
import Dispatch
import OSThread
import Synchronization

/// A `SerialExecutor` with one thread of its own, which may block: an actor
/// on it (`SerialCommitLoop`) runs the SQLite ledger's group commits, their
/// SQLite work and fsync included, right on that thread.
///
/// Jobs run one at a time, in the order they were enqueued. `shutdown()` lets
/// the thread run what is queued and end; call it once nothing can enqueue
/// on it any more.
final class WriterThreadExecutor: SerialExecutor {
    private struct Queue: ~Copyable {
        var jobs = Deque<UnownedJob>()
        var stopping = false
    }

    private let queue = Mutex(Queue())
    /// One signal per job enqueued, and one for the stop.
    private let signals = DispatchSemaphore(value: 0)

    /// Thrown when the system refuses a thread.
    struct NoThread: Error, CustomStringConvertible {
        var description: String { "the system refused a thread for the ledger's writer" }
    }

    init(name: String) throws(NoThread) {
        guard OSThread.start(name: name, { [self] in runJobs() }) else { throw NoThread() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock {
            // A job after the stop would never run, and its task would hang.
            precondition(!$0.stopping, "a job enqueued on a writer thread that was shut down")
            $0.jobs.append(job)
        }
        signals.signal()
    }

    func shutdown() {
        queue.withLock { $0.stopping = true }
        signals.signal()
    }

    private func runJobs() {
        while true {
            signals.wait()
            let (job, stopping) = queue.withLock { ($0.jobs.popFirst(), $0.stopping) }
            if let job {
                job.runSynchronously(on: asUnownedSerialExecutor())
            } else if stopping {
                return
            }
        }
    }
}
