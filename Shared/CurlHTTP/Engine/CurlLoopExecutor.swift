/// Runs jobs on the curl loop's thread, between its turns.
///
/// A task that prefers it (`CurlHTTPClient.taskExecutor`) runs where its
/// calls run: a request it makes is started in the same turn, and the answer
/// resumes it on the same thread. Without it, each call wakes the loop and
/// each answer wakes another thread to resume the caller. For short work
/// around calls (building a request, reading an answer), never anything
/// that blocks: the loop's transfers wait meanwhile. Once the loop has ended,
/// a job runs on the thread that enqueues it.
final class CurlLoopExecutor: TaskExecutor {
    private let shared: SharedState

    init(shared: SharedState) {
        self.shared = shared
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !shared.enqueueJob(job) { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Runs `jobs` here, on the calling thread (the loop's, or one after it ended).
    func run(_ jobs: [UnownedJob]) {
        for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
