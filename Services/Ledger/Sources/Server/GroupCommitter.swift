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
        var jobs: Deque<Job> = []
        var waiter: CheckedContinuation<Void, Never>?
        var stopping = false
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
    private let maxBatch: Int
    private let clock: @Sendable () -> Int64
    private let publish: @Sendable ([CommittedEvent]) -> Void
    private let logger: Logger
    private let state = Mutex(State())
    private let metrics = LedgerMetrics()

    public init(
        store: any LedgerStore, rules: LedgerRules, maxBatch: Int = 1_024, clock: @escaping @Sendable () -> Int64,
        logger: Logger, publish: @escaping @Sendable ([CommittedEvent]) -> Void
    ) {
        self.store = store
        self.rules = rules
        self.maxBatch = maxBatch
        self.clock = clock
        self.logger = logger
        self.publish = publish
    }

    /// Queues `work` for the next commit and returns its outcome once committed.
    /// A rule's refusal comes back as `LedgerFailure`; anything else failed to commit.
    public func submit(_ work: LedgerWork, requestID: String, deadline: Int64 = 0) async throws -> LedgerWorkOutput {
        try await withCheckedThrowingContinuation { continuation in
            let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                guard !state.stopping else { return (false, nil) }
                state.jobs.append(Job(work: work, requestID: requestID, deadline: deadline, continuation: continuation))
                return (true, state.waiter.take())
            }
            guard accepted else { return continuation.resume(throwing: Stopped()) }
            waiter?.resume()
        }
    }

    /// Commits until graceful shutdown, then finishes what was already submitted.
    /// Up to `store.concurrentCommits` groups run at once, never two whose
    /// prefetches overlap: a later request about the same rows waits for the
    /// earlier one's commit, as it would behind a single writer.
    public func run() async throws {
        let lanes = max(1, store.concurrentCommits)
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Int.self) { group in
                var running: [Int: LedgerPrefetch] = [:]
                var nextGroup = 0
                func awaitOneCommit() async {
                    if let done = await group.next() { running[done] = nil }
                }
                while true {
                    // A free lane first, so that work arriving meanwhile joins this batch.
                    while running.count >= lanes { await awaitOneCommit() }
                    guard let batch = await nextBatch() else { break }
                    let prefetch = rules.prefetch(for: batch.lazy.map(\.work))
                    while running.values.contains(where: { $0.overlaps(prefetch) }) { await awaitOneCommit() }
                    let id = nextGroup
                    nextGroup += 1
                    running[id] = prefetch
                    group.addTask {
                        await self.commit(batch, prefetch: prefetch)
                        return id
                    }
                }
            }
        } onGracefulShutdown: {
            self.stopAccepting()
        }
    }

    private func nextBatch() async -> [Job]? {
        while true {
            let batch = state.withLock { state -> [Job]? in
                let count = min(state.jobs.count, maxBatch)
                guard count > 0 else { return state.stopping ? nil : [] }
                defer { state.jobs.removeFirst(count) }
                return Array(state.jobs.prefix(count))
            }
            guard let batch else { return nil }
            if !batch.isEmpty { return batch }
            // Woken by a submit, by graceful shutdown, or by cancellation of the service.
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state in
                        guard state.jobs.isEmpty, !state.stopping, !Task.isCancelled else { return true }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                stopAccepting()
            }
        }
    }

    /// No more submits; the run loop finishes what is queued and ends.
    private func stopAccepting() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.stopping = true
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
