/// A request waiting in the client's queue for a transfer slot.
struct QueuedRequest: Sendable {
    let id: UInt64
    let request: HTTPRequest
    /// When `execute` queued it: its total time-out counts from here.
    let enqueuedAt: ContinuousClock.Instant
}

/// What callers' tasks and the curl loop's thread share, as a value that takes
/// events and returns what to do: no curl, no clock, no lock (the client keeps
/// it inside a `Mutex`), so each race has a test of its own.
///
/// Each request is an entry from `register` until exactly one party resumes
/// its continuation: the loop with a result, a cancellation, or the stop. The
/// party that removes the entry is the one that resumes, which is what makes
/// every continuation resume exactly once. Generic over the continuation
/// (`Waiter`) so tests can drive it with plain values.
struct ClientStateMachine<Waiter> {
    enum Phase: Equatable { case notStarted, running, stopping, stopped }

    private enum Entry {
        /// `execute` has an id but has not handed over its continuation yet.
        case registered
        /// The task was cancelled before the continuation arrived.
        case cancelledEarly
        case queued(Waiter)
        case active(Waiter)
    }

    /// What the loop picks up in one turn.
    struct Work {
        var started: [QueuedRequest] = []
        /// Active transfers whose callers went away: remove them from curl.
        var cancelled: [UInt64] = []
        var stop = false
    }

    private(set) var phase = Phase.notStarted
    private var entries: [UInt64: Entry] = [:]
    private var queue = FIFO<QueuedRequest>()
    private var cancelledActive: [UInt64] = []
    private var nextID: UInt64 = 0
    /// A wake-up was sent and the loop has not taken work since: another
    /// would be a wasted syscall (2,000 callers would send 2,000).
    private var wakePending = false

    var queuedCount: Int { queue.count }

    mutating func register() -> UInt64 {
        nextID += 1
        entries[nextID] = .registered
        return nextID
    }

    enum EnqueueAction {
        case none
        case wakeLoop
        case fail(Waiter, HTTPClientError)
    }

    mutating func enqueue(_ queued: QueuedRequest, continuation: Waiter) -> EnqueueAction {
        switch entries[queued.id] {
        case .cancelledEarly:
            entries[queued.id] = nil
            return .fail(continuation, .cancelled)
        case .registered:
            guard phase == .notStarted || phase == .running else {
                entries[queued.id] = nil
                return .fail(continuation, .shutdown)
            }
            entries[queued.id] = .queued(continuation)
            queue.append(queued)
            return wakeIfRunning() ? .wakeLoop : .none
        case .queued, .active, nil:
            preconditionFailure("request \(queued.id) enqueued twice")
        }
    }

    enum CancelAction {
        case none
        case fail(Waiter, wakeLoop: Bool)
    }

    mutating func cancel(id: UInt64) -> CancelAction {
        switch entries[id] {
        case .registered:
            entries[id] = .cancelledEarly
            return .none
        case .queued(let continuation):
            // Left in the FIFO; `takeWork` skips ids that are no longer queued.
            entries[id] = nil
            return .fail(continuation, wakeLoop: false)
        case .active(let continuation):
            entries[id] = nil
            cancelledActive.append(id)
            return .fail(continuation, wakeLoop: wakeIfRunning())
        case .cancelledEarly, nil:
            return .none
        }
    }

    /// `run()` began; requests queued before it are taken by the loop's first turn.
    mutating func start() {
        precondition(phase == .notStarted, "CurlHTTPClient.run() called more than once")
        phase = .running
    }

    /// Graceful shutdown or cancellation of `run()`. Returns whether to wake the loop.
    mutating func requestStop() -> Bool {
        switch phase {
        case .notStarted, .running:
            phase = .stopping
            wakePending = true
            return true
        case .stopping, .stopped:
            return false
        }
    }

    /// The loop's turn: up to `freeSlots` queued requests become active.
    mutating func takeWork(freeSlots: Int) -> Work {
        wakePending = false
        var work = Work()
        swap(&work.cancelled, &cancelledActive)
        guard phase == .running else {
            work.stop = true
            return work
        }
        while work.started.count < freeSlots, let next = queue.popFirst() {
            guard case .queued(let continuation) = entries[next.id] else { continue }
            entries[next.id] = .active(continuation)
            work.started.append(next)
        }
        return work
    }

    /// A transfer ended; `nil` when its caller was already resumed (cancelled).
    mutating func complete(id: UInt64) -> Waiter? {
        guard case .active(let continuation) = entries[id] else { return nil }
        entries[id] = nil
        return continuation
    }

    /// The loop has stopped and released curl: every queued and active
    /// request is handed back to fail with `.shutdown`; later ones fail at once.
    mutating func finish() -> [Waiter] {
        phase = .stopped
        queue.removeAll()
        cancelledActive = []
        var pending: [Waiter] = []
        entries = entries.filter { _, entry in
            switch entry {
            case .queued(let waiter), .active(let waiter):
                pending.append(waiter)
                return false
            case .registered, .cancelledEarly:
                return true  // their `enqueue` sees the phase or the cancellation
            }
        }
        return pending
    }

    private mutating func wakeIfRunning() -> Bool {
        guard phase == .running, !wakePending else { return false }
        wakePending = true
        return true
    }
}
