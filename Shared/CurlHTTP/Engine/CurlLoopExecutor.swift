/// Runs tasks on the curl loop's thread: a task executor a caller prefers
/// (`withTaskExecutorPreference`) for work that is mostly calls to this
/// client, as a verifier's requests are.
///
/// Why: a task on the event loops that calls `execute` wakes the curl loop to
/// start its transfer, and the loop wakes an event loop again to resume it
/// with the response: two thread hand-offs per call. On the loop's own thread
/// the transfer starts in the turn that queued it, and the response resumes
/// its task in the turn that finished it.
///
/// Jobs run between the loop's turns, oldest first. Before the loop runs
/// they wait for it; once it has stopped they go to the global executor, so
/// no task is ever stranded.
final class CurlLoopExecutor: TaskExecutor {
    private let shared: SharedState

    init(shared: SharedState) { self.shared = shared }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !shared.enqueueJob(job) { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    /// Runs `jobs` on the caller's thread, the loop's, as this executor.
    func run(_ jobs: [UnownedJob]) {
        for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
