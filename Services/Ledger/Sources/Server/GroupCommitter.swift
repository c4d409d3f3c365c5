import Contracts
import DequeModule
import Logging
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
        let continuation: CheckedContinuation<LedgerWorkOutput, any Error>

        func hasExpired(at now: Int64) -> Bool { deadline > 0 && deadline <= now }
    }

    struct State: ~Copyable {
        var machine: GroupCommitStateMachine<Job>
        /// The run loop, asleep until a submit or graceful shutdown.
        var waiter: CheckedContinuation<Void, Never>?
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

    /// Queues `work` for the next commit and returns its outcome once committed.
    /// A rule's refusal comes back as `LedgerFailure`; anything else failed to commit.
    public func submit(_ work: LedgerWork, requestID: String, deadline: Int64 = 0) async throws -> LedgerWorkOutput {
        try await withCheckedThrowingContinuation { continuation in
            let job = Job(work: work, requestID: requestID, deadline: deadline, continuation: continuation)
            let (action, waiter) = state.withLock { state in
                let action = state.machine.submit(job)
                return (action, action == .queued(wake: true) ? state.waiter.take() : nil)
            }
            if action == .rejected { return continuation.resume(throwing: Stopped()) }
            waiter?.resume()
        }
    }

    /// Commits until graceful shutdown, then finishes what was already submitted.
    /// Up to `store.concurrentCommits` groups run at once, never two whose
    /// prefetches overlap: a later request about the same rows waits for the
    /// earlier one's commit, as it would behind a single writer
    /// (`GroupCommitStateMachine` keeps that bookkeeping).
    public func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Int.self) { group in
                var action = state.withLock { $0.machine.next() }
                while true {
                    switch action {
                    case .commit(let id, let batch, let prefetch):
                        group.addTask {
                            await self.commit(batch, prefetch: prefetch)
                            return id
                        }
                    case .prefetch(let batch):
                        let prefetch = rules.prefetch(for: batch.lazy.map(\.work))
                        action = state.withLock { $0.machine.prefetched(batch, prefetch) }
                        continue
                    case .awaitCommit:
                        if let done = await group.next() { state.withLock { $0.machine.committed(done) } }
                    case .awaitWork:
                        await awaitWork()
                    case .finish:
                        return
                    }
                    action = state.withLock { $0.machine.next() }
                }
            }
        } onGracefulShutdown: {
            self.stopAccepting()
        }
    }

    /// Sleeps until a submit, graceful shutdown, or cancellation of the service.
    private func awaitWork() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    guard state.machine.waitsForWork, !Task.isCancelled else { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            stopAccepting()
        }
    }

    /// No more submits; the run loop finishes what is queued and ends.
    private func stopAccepting() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            _ = state.machine.stop()
            return state.waiter.take()
        }?.resume()
    }

    private func commit(_ batch: [Job], prefetch: LedgerPrefetch) async {
        let now = clock()
        for job in batch where job.hasExpired(at: now) { job.continuation.resume(throwing: DeadlinePassed()) }
        let batch = batch.filter { !$0.hasExpired(at: now) }
        guard !batch.isEmpty else { return }
        let works = batch.map { ($0.work, $0.requestID) }
        let rules = self.rules
        let started = ContinuousClock.now
        do {
            let outcomes = try await store.commit(units: works.count, prefetch: prefetch) { unit, session in
                try rules.apply(works[unit].0, requestID: works[unit].1, now: now, session: session)
            }
            metrics.committed(batchSize: batch.count, duration: ContinuousClock.now - started)
            let events = outcomes.flatMap(\.events)
            if !events.isEmpty { publish(events) }
            for (job, outcome) in zip(batch, outcomes) {
                job.continuation.resume(with: outcome.result)
            }
        } catch {
            // Nothing of this batch is on disk: every request gets a retryable failure.
            logger.error("group commit failed", metadata: ["ledger.batch": "\(batch.count)", "error": "\(loggable(error))"])
            metrics.commitFailed()
            for job in batch { job.continuation.resume(throwing: error) }
        }
    }
}
