import DequeModule
import Dispatch
import Foundation
import Synchronization

/// A `TaskExecutor` with one thread of its own, which may block: the SQLite
/// ledger's group commits run their SQLite work and fsync right on it.
///
/// Why: through GRDB's async API each group hopped from the committer's task
/// (on an event loop) to GRDB's writer queue and back, and the committer's
/// loop shared the event loops with the requests' decoding. With the
/// committer's tasks preferring this executor, its loop, its commits and
/// GRDB's synchronous write all run here. `storekeeper-bench-ledger`, two
/// alternating pairs: 24,026 and 26,062 transactions/s against 20,834 and
/// 21,230, with less CPU. One request at a time it changes nothing (13
/// context switches per request either way): the hop it saves replaced one
/// to this thread.
///
/// Jobs run in the order they were enqueued. `shutdown()` lets the thread run
/// what is queued and end; call it once nothing prefers the executor any more.
final class WriterThreadExecutor: TaskExecutor {
    private struct Queue: ~Copyable {
        var jobs = Deque<UnownedJob>()
        var stopping = false
    }

    private let queue = Mutex(Queue())
    /// One signal per job enqueued, and one for the stop.
    private let signals = DispatchSemaphore(value: 0)

    init(name: String) {
        Thread { [self] in
            // Named from inside: on Linux a name set before `start` never reaches the OS thread.
            Thread.current.name = name
            runJobs()
        }.start()
    }

    private let stopped = Atomic(false)

    /// The thread has run its last job and ended.
    var hasStopped: Bool { stopped.load(ordering: .acquiring) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { queue in
            // Nobody would run it: its task would hang instead.
            precondition(!queue.stopping, "a job for the ledger's writer thread after its shutdown")
            queue.jobs.append(job)
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
                job.runSynchronously(on: asUnownedTaskExecutor())
            } else if stopping {
                stopped.store(true, ordering: .releasing)
                return
            }
        }
    }
}
