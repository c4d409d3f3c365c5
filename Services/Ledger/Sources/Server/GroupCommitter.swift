import Contracts
import DequeModule
import Dispatch
import Logging
import OSThread
import ServiceLifecycle
import Synchronization

/// The ledger's writer. Work submitted while a commit is on its way to disk
/// waits and goes into the next commit together (group commit), so many
/// requests share one fsync; each is answered only after its commit, and the
/// events of a commit are handed to the publisher in seq order. A store that
/// can (PostgreSQL) runs two groups at once, never two about the same rows.
public final class GroupCommitter: Service, Sendable {
    struct Job {
        let work: LedgerWork
        let requestID: String
        /// Milliseconds since the epoch; 0 for none.
        let deadline: Int64
        /// Called once with the outcome once committed, or why not.
        let complete: Completion

        func hasExpired(at now: Int64) -> Bool { deadline > 0 && deadline <= now }
    }

    struct State: ~Copyable {
        var machine: GroupCommitStateMachine<Job>
        /// Wakes the run loop, asleep until a submit or graceful shutdown: a
        /// task's continuation, or the writer thread's semaphore. Taken by
        /// the one who wakes it.
        var wake: (@Sendable () -> Void)?
    }

    /// Thrown to work whose deadline passed while it waited for its commit: it
    /// is not started, since nobody waits for its answer, and a change made
    /// after the client gave up would show on its retry as granted earlier.
    public struct DeadlinePassed: Error, CustomStringConvertible {
        public var description: String { "the deadline passed before the work started" }
    }

    /// Thrown to work submitted after the writer stopped.
    public struct Stopped: Error, CustomStringConvertible {
        public var description: String { "the ledger's writer is stopping" }
    }

    private let store: any LedgerStore
    private let rules: LedgerRules
    private let clock: @Sendable () -> Int64
    private let publish: @Sendable ([CommittedEvent]) -> Void
    private let logger: Logger
    private let state: Mutex<State>
    private let metrics = LedgerMetrics()

    public init(
        store: any LedgerStore, rules: LedgerRules, maxBatch: Int = 1_024, clock: @escaping @Sendable () -> Int64,
        logger: Logger, publish: @escaping @Sendable ([CommittedEvent]) -> Void
    ) {
        self.store = store
        self.rules = rules
        state = Mutex(State(machine: GroupCommitStateMachine(lanes: max(1, store.concurrentCommits), maxBatch: maxBatch)))
        self.clock = clock
        self.logger = logger
        self.publish = publish
    }

    /// Hears a job's outcome; on SQLite on the writer's thread, so it must not block.
    public typealias Completion = @Sendable (Result<LedgerWorkOutput, any Error>) -> Void

    /// Queues `work` for the next commit and returns its outcome once committed.
    /// A rule's refusal comes back as `LedgerFailure`; anything else failed to commit.
    public func submit(_ work: LedgerWork, requestID: String, deadline: Int64 = 0) async throws -> LedgerWorkOutput {
        try await withCheckedThrowingContinuation { continuation in
            submit(work, requestID: requestID, deadline: deadline) { continuation.resume(with: $0) }
        }
    }

    /// Queues `work` for the next commit; `complete` hears its outcome (what
    /// the `async` form returns or throws) where the commit ends: on SQLite
    /// the writer's thread. At once when the writer has stopped. For a caller
    /// that answers from there instead of waking a task to do it.
    public func submit(_ work: LedgerWork, requestID: String, deadline: Int64 = 0, then complete: @escaping Completion) {
        let job = Job(work: work, requestID: requestID, deadline: deadline, complete: complete)
        let (action, wake) = state.withLock { state in
            let action = state.machine.submit(job)
            return (action, action == .queued(wake: true) ? state.wake.take() : nil)
        }
        if action == .rejected { return complete(.failure(Stopped())) }
        wake?()
    }

    /// Commits until graceful shutdown, then finishes what was already submitted.
    /// Up to `store.concurrentCommits` groups run at once, never two whose
    /// prefetches overlap: a later request about the same rows waits for the
    /// earlier one's commit, as it would behind a single writer
    /// (`GroupCommitStateMachine` keeps that bookkeeping). A store that
    /// commits one group at a time by blocking its caller (SQLite) gets a
    /// thread of its own for the loop and its commits (`SerialCommitLoop`).
    /// There a commit under way ends on disk even when the service is
    /// cancelled, and cancellation stops the writer as graceful shutdown
    /// does. Call `run()` once.
    public func run() async throws {
        await withGracefulShutdownHandler {
            guard let store = store as? any BlockingLedgerStore, store.concurrentCommits == 1 else {
                return await commitInLanes()
            }
            let loop = SerialCommitLoop(committer: self, store: store)
            let ran = await withTaskCancellationHandler {
                await withCheckedContinuation { (ended: CheckedContinuation<Bool, Never>) in
                    let started = OSThread.start(name: "ledger-writer") {
                        loop.run()
                        ended.resume(returning: true)
                    }
                    if !started { ended.resume(returning: false) }
                }
            } onCancel: {
                self.stopAccepting()
            }
            if !ran {
                logger.warning("no thread for the ledger's writer: committing through the store's async API")
                await commitInLanes()
            }
        } onGracefulShutdown: {
            self.stopAccepting()
        }
    }

    /// The loop for a store with async commits: each group in a task of its own.
    private func commitInLanes() async {
        await withTaskGroup(of: Int.self) { group in
            while true {
                switch nextAction() {
                case .commit(let id, let batch, let prefetch):
                    group.addTask {
                        await self.commit(batch, prefetch: prefetch)
                        return id
                    }
                case .prefetch:
                    preconditionFailure("nextAction() does the prefetches")
                case .awaitCommit:
                    if let done = await group.next() { committed(done) }
                case .awaitWork:
                    await awaitWork()
                case .finish:
                    return
                }
            }
        }
    }

    /// The state machine's next step, with any prefetch it asks for worked
    /// out on the way. Without `prefetching` the prefetch is empty: for one
    /// lane, where no group can overlap, and a store that reads what it needs.
    func nextAction(prefetching: Bool = true) -> GroupCommitStateMachine<Job>.RunAction {
        var action = state.withLock { $0.machine.next() }
        while case .prefetch(let batch) = action {
            let prefetch = prefetching ? rules.prefetch(for: batch.lazy.map(\.work)) : LedgerPrefetch()
            action = state.withLock { $0.machine.prefetched(batch, prefetch) }
        }
        return action
    }

    /// Group `id` ended, committed or not.
    func committed(_ id: Int) {
        state.withLock { $0.machine.committed(id) }
    }

    /// Sleeps until a submit, graceful shutdown, or cancellation of the service.
    func awaitWork() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    guard state.machine.waitsForWork, !Task.isCancelled else { return true }
                    state.wake = { continuation.resume() }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            stopAccepting()
        }
    }

    /// `awaitWork` for the writer's own thread, which it blocks on `signal`
    /// until a submit or the stop signals it once.
    @available(*, noasync, message: "blocks its thread: call it from SerialCommitLoop")
    func sleepUntilWork(on signal: DispatchSemaphore) {
        let sleeps = state.withLock { state in
            guard state.machine.waitsForWork else { return false }
            state.wake = { signal.signal() }
            return true
        }
        if sleeps { signal.wait() }
    }

    /// No more submits; the run loop finishes what is queued and ends.
    private func stopAccepting() {
        state.withLock { state -> (@Sendable () -> Void)? in
            _ = state.machine.stop()
            return state.wake.take()
        }?()
    }

    typealias Apply = @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> LedgerWorkOutput

    /// Commits `batch` through a store's blocking commit, on the caller's thread.
    @available(*, noasync, message: "blocks its thread: call it from SerialCommitLoop")
    func commit(_ batch: [Job], blocking: (_ units: Int, _ apply: @escaping Apply) throws -> [UnitOutcome<LedgerWorkOutput>]) {
        guard let (jobs, apply) = start(batch) else { return }
        let started = ContinuousClock.now
        finish(jobs, Result { try blocking(jobs.count, apply) }, started: started)
    }

    private func commit(_ batch: [Job], prefetch: LedgerPrefetch) async {
        guard let (jobs, apply) = start(batch) else { return }
        let started = ContinuousClock.now
        let outcomes: Result<[UnitOutcome<LedgerWorkOutput>], any Error>
        do {
            outcomes = .success(try await store.commit(units: jobs.count, prefetch: prefetch, apply))
        } catch {
            outcomes = .failure(error)
        }
        finish(jobs, outcomes, started: started)
    }

    /// Fails the jobs whose deadline passed, unstarted, and returns the
    /// others with what the store applies to each; nil when none is left.
    private func start(_ batch: [Job]) -> (jobs: [Job], apply: Apply)? {
        let now = clock()
        for job in batch where job.hasExpired(at: now) { job.complete(.failure(DeadlinePassed())) }
        let jobs = batch.filter { !$0.hasExpired(at: now) }
        guard !jobs.isEmpty else { return nil }
        let works = jobs.map { ($0.work, $0.requestID) }
        let rules = self.rules
        return (jobs, { unit, session in try rules.apply(works[unit].0, requestID: works[unit].1, now: now, session: session) })
    }

    /// Publishes a committed group's events and answers its jobs.
    private func finish(
        _ jobs: [Job], _ outcomes: Result<[UnitOutcome<LedgerWorkOutput>], any Error>, started: ContinuousClock.Instant
    ) {
        switch outcomes {
        case .success(let outcomes):
            metrics.committed(batchSize: jobs.count, duration: ContinuousClock.now - started)
            let events = outcomes.flatMap(\.events)
            if !events.isEmpty { publish(events) }
            for (job, outcome) in zip(jobs, outcomes) {
                job.complete(outcome.result)
            }
        case .failure(let error):
            // Nothing of this batch is on disk: every request gets a retryable failure.
            logger.error("group commit failed", metadata: ["ledger.batch": "\(jobs.count)", "error": "\(loggable(error))"])
            metrics.commitFailed()
            for job in jobs { job.complete(.failure(error)) }
        }
    }
}
