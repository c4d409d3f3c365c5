import OSThread
import Synchronization

/// Where a waiting `execute` call is resumed.
typealias ResponseContinuation = CheckedContinuation<Result<HTTPResponse, HTTPClientError>, Never>

/// A request's end, as the loop hands it back: its id and what `execute` returns.
typealias TransferOutcome = (id: UInt64, result: Result<HTTPResponse, HTTPClientError>)

/// The `ClientStateMachine` behind a lock, plus the means to wake the loop.
/// Callers' tasks and the loop thread meet only here.
///
/// Continuations are resumed after the lock is released (resuming schedules
/// a task; no reason to hold others up meanwhile). The waker is called with
/// the lock held: it is one non-blocking write, and holding the lock is what
/// guarantees the loop has not closed its descriptor meanwhile (`finish`
/// removes the waker under the same lock).
final class SharedState: Sendable {
    private struct Locked {
        var machine = ClientStateMachine<ResponseContinuation>()
        /// Set by the loop while it can be woken.
        var waker: (@Sendable () -> Void)?
        /// Task jobs for the loop's thread (`CurlLoopExecutor`), oldest first.
        var jobs: [UnownedJob] = []
        /// Guests adopted and not yet attached by the loop (`HostedGuests`).
        var guests: [any DescriptorGuest] = []
        /// The loop has stopped: jobs go elsewhere, and guests are refused.
        var finished = false

        func wakeLoop() {
            waker?()
        }
    }

    private let locked = Mutex(Locked())

    func register() -> UInt64 {
        locked.withLock { $0.machine.register() }
    }

    func enqueue(_ queued: QueuedRequest, continuation: ResponseContinuation) {
        let action = locked.withLock { state in
            let action = state.machine.enqueue(queued, continuation: continuation)
            if case .wakeLoop = action { state.wakeLoop() }
            return action
        }
        if case .fail(let continuation, let error) = action {
            continuation.resume(returning: .failure(error))
        }
    }

    func cancel(id: UInt64) {
        let action = locked.withLock { state in
            let action = state.machine.cancel(id: id)
            if case .fail(_, wakeLoop: true) = action { state.wakeLoop() }
            return action
        }
        if case .fail(let continuation, _) = action {
            continuation.resume(returning: .failure(.cancelled))
        }
    }

    func start() {
        locked.withLock { $0.machine.start() }
    }

    /// Queues `job` for the loop's thread and wakes the loop when it is the
    /// first waiting (so the loop's next wait returns at once, and its next
    /// turn takes every job queued by then); false, queuing nothing, once the
    /// loop has stopped.
    func enqueueJob(_ job: UnownedJob) -> Bool {
        locked.withLock { state in
            guard !state.finished else { return false }
            state.jobs.append(job)
            if state.jobs.count == 1 { state.wakeLoop() }
            return true
        }
    }

    /// Queues `guest` for the loop's thread to attach, and wakes the loop;
    /// false, queuing nothing, once the loop has stopped.
    func adopt(_ guest: any DescriptorGuest) -> Bool {
        locked.withLock { state in
            guard !state.finished else { return false }
            state.guests.append(guest)
            state.wakeLoop()
            return true
        }
    }

    /// Requests waiting for a transfer slot (for tests and diagnostics).
    var queuedCount: Int {
        locked.withLock { $0.machine.queuedCount }
    }

    func requestStop() {
        locked.withLock { state in
            if state.machine.requestStop() { state.wakeLoop() }
        }
    }

    // MARK: Loop side

    /// The loop can be woken from now on by `waker`, which is only ever
    /// called with the lock held (so the loop can free what it uses after `finish`).
    func attach(waker: @escaping @Sendable () -> Void) {
        locked.withLock { $0.waker = waker }
    }

    func takeWork(freeSlots: Int) -> ClientStateMachine<ResponseContinuation>.Work {
        locked.withLock { $0.machine.takeWork(freeSlots: freeSlots) }
    }

    /// The task jobs waiting for the loop's thread, oldest first, and the
    /// guests adopted since the last call, to attach: one lock per turn.
    func takeJobsAndGuests() -> (jobs: [UnownedJob], guests: [any DescriptorGuest]) {
        locked.withLock { state in
            guard !state.jobs.isEmpty || !state.guests.isEmpty else { return ([], []) }
            defer {
                state.jobs = []
                state.guests = []
            }
            return (state.jobs, state.guests)
        }
    }

    /// Resumes the callers of finished transfers, all under one lock acquisition.
    func complete(_ results: [TransferOutcome]) {
        guard !results.isEmpty else { return }
        let continuations = locked.withLock { state in
            results.map { state.machine.complete(id: $0.id) }
        }
        for (continuation, outcome) in zip(continuations, results) {
            continuation?.resume(returning: outcome.result)
        }
    }

    /// The loop is about to free its multi handle: from here on nobody wakes
    /// it, and every request still waiting fails with `.shutdown`. Task jobs
    /// still waiting, and any enqueued later, go to the global executor.
    /// Guests never attached are detached; later ones are refused.
    func finish() {
        let (pending, jobs, guests) = locked.withLock { state in
            state.waker = nil
            state.finished = true
            defer {
                state.jobs = []
                state.guests = []
            }
            return (state.machine.finish(), state.jobs, state.guests)
        }
        for guest in guests { guest.detach(hostStopping: true) }
        for continuation in pending {
            continuation.resume(returning: .failure(.shutdown))
        }
        for job in jobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}

