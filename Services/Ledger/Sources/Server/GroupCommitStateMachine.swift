import DequeModule

/// The group committer's bookkeeping, without tasks, locks or clocks: the
/// queue of submitted work, the batch cap, the lanes (up to `lanes` groups
/// committing at once, never two whose prefetches overlap) and stopping.
/// `GroupCommitter` feeds it events and does what the returned actions say.
/// Generic over the job so that tests need no continuations.
struct GroupCommitStateMachine<Job> {
    /// What a submit becomes.
    enum SubmitAction: Equatable {
        /// Queued; `wake` when the run loop waits for work and must be woken.
        case queued(wake: Bool)
        /// The writer stopped: answer `GroupCommitter.Stopped`.
        case rejected
    }

    /// What the run loop does next.
    enum RunAction {
        /// Start committing `batch` (all of it, in order) as group `id`.
        case commit(id: Int, batch: [Job], prefetch: LedgerPrefetch)
        /// Work out what `batch` reads (outside any lock) and report it with `prefetched`.
        case prefetch(batch: [Job])
        /// Wait for a running group to end (`committed(id)`): every lane is
        /// busy, or the next batch overlaps a group still running.
        case awaitCommit
        /// Wait for a submit or `stop()`.
        case awaitWork
        /// Stopped and nothing queued: end once the running groups end.
        case finish
    }

    let lanes: Int
    let maxBatch: Int
    private(set) var queue: Deque<Job> = []
    private(set) var stopping = false
    /// The prefetch of each group committing now, by id.
    private(set) var running: [Int: LedgerPrefetch] = [:]
    /// A batch taken from the queue that waits for an overlapping group to end.
    private var blocked: (batch: [Job], prefetch: LedgerPrefetch)?
    private var awaitingWork = false
    private var nextID = 0

    init(lanes: Int, maxBatch: Int) {
        precondition(lanes > 0 && maxBatch > 0)
        self.lanes = lanes
        self.maxBatch = maxBatch
    }

    mutating func submit(_ job: Job) -> SubmitAction {
        guard !stopping else { return .rejected }
        queue.append(job)
        defer { awaitingWork = false }
        return .queued(wake: awaitingWork)
    }

    /// No more submits; what is queued is still committed. True when the run loop waits for work and must be woken.
    mutating func stop() -> Bool {
        stopping = true
        defer { awaitingWork = false }
        return awaitingWork
    }

    /// True from `.awaitWork` until a submit or `stop()`: the run loop may sleep.
    var waitsForWork: Bool { awaitingWork }

    /// The next step of the run loop. A free lane comes first, so that work
    /// arriving meanwhile joins the next batch; then the batch (at most
    /// `maxBatch` jobs), whose prefetch must not overlap a running group's.
    mutating func next() -> RunAction {
        guard running.count < lanes else { return .awaitCommit }
        if let waiting = blocked {
            guard !overlapsRunning(waiting.prefetch) else { return .awaitCommit }
            blocked = nil
            return start(waiting.batch, waiting.prefetch)
        }
        guard !queue.isEmpty else {
            if stopping { return .finish }
            awaitingWork = true
            return .awaitWork
        }
        let count = min(queue.count, maxBatch)
        defer { queue.removeFirst(count) }
        return .prefetch(batch: Array(queue.prefix(count)))
    }

    /// What the batch of the last `.prefetch` reads: it starts now, or waits
    /// for the groups it overlaps to end.
    mutating func prefetched(_ batch: [Job], _ prefetch: LedgerPrefetch) -> RunAction {
        guard !overlapsRunning(prefetch) else {
            blocked = (batch, prefetch)
            return .awaitCommit
        }
        return start(batch, prefetch)
    }

    /// Group `id` ended (committed or failed): its lane and its rows are free.
    mutating func committed(_ id: Int) {
        running[id] = nil
    }

    private func overlapsRunning(_ prefetch: LedgerPrefetch) -> Bool {
        running.values.contains { $0.overlaps(prefetch) }
    }

    private mutating func start(_ batch: [Job], _ prefetch: LedgerPrefetch) -> RunAction {
        let id = nextID
        nextID += 1
        running[id] = prefetch
        return .commit(id: id, batch: batch, prefetch: prefetch)
    }
}
