/// The gateway side of the verifier pool as a pure state machine: which
/// verifier gets which request, what happens when one dies or leaves. No
/// sockets, no clock: the caller feeds events with the time and performs
/// the returned sends.
///
/// - Credit-based flow: a verifier receives at most the credits it granted,
///   so a slow verifier holds only what it said it can take. Its credits are
///   its share less what it holds, counted here: requests sent and not yet
///   answered, including those still on the wire toward it. Work goes to
///   the verifier with the most free credits; among equals, the one given a
///   request least recently (then the lowest identity): the same events
///   always give the same dispatches.
/// - Liveness: a verifier not heard from for `deadAfter` is dead; its
///   in-flight requests go back to the front of the queue and are dispatched
///   again (the ledger's dedup makes a second verification safe).
/// - A request's first reply wins; a late duplicate is dropped.
public struct PoolDispatcher: Sendable {
    public typealias WorkerID = [UInt8]
    public typealias RequestID = UInt64

    public struct Dispatch: Equatable, Sendable {
        public let worker: WorkerID
        public let request: RequestID
    }

    struct Worker: Sendable {
        /// How many requests it may hold at once: its credits are `limit - inFlight.count`.
        var limit: Int
        var inFlight: Set<RequestID> = []
        var lastSeen: ContinuousClock.Instant
        var draining = false
        /// The dispatch count when it was last given a request; 0 for never.
        var lastDispatch: UInt64 = 0

        var credits: Int { draining ? 0 : max(0, limit - inFlight.count) }
    }

    struct Pending: Sendable {
        let id: RequestID
        let deadline: ContinuousClock.Instant
    }

    /// How long past its deadline a dispatched request may stay unanswered.
    public static let answerGrace: Duration = .seconds(1)

    public let deadAfter: Duration
    private var workers: [WorkerID: Worker] = [:]
    private typealias WorkerIndex = Dictionary<WorkerID, Worker>.Index
    private var queue: [Pending] = []
    private var assigned: [RequestID: (worker: WorkerID, deadline: ContinuousClock.Instant)] = [:]

    public private(set) var redispatched = 0
    private var dispatchCount: UInt64 = 0

    public init(deadAfter: Duration = .seconds(3)) {
        self.deadAfter = deadAfter
    }

    public var workerIDs: [WorkerID] { Array(workers.keys) }
    public var workerCount: Int { workers.values.filter { !$0.draining }.count }
    /// Live verifiers that gave this gateway a share of their capacity. One
    /// that has just found the gateway announces a share of 0 while its other
    /// pools hold all it has, for a heartbeat or two: it is live, but nothing
    /// sent here could be served yet.
    public var servingWorkerCount: Int { workers.values.filter { !$0.draining && $0.limit > 0 }.count }
    public var queuedCount: Int { queue.count }
    public var inFlightCount: Int { assigned.count }

    /// A new request, to be answered by `deadline`.
    public mutating func submit(_ id: RequestID, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) -> [Dispatch] {
        queue.append(Pending(id: id, deadline: deadline))
        return dispatch(now: now)
    }

    /// READY: the worker can take `capacity` more requests than it holds now
    /// (sent at start, when its share changes, and again when it lost sight
    /// of this gateway), out of `share` in all.
    ///
    /// A known worker's credits become `share` less what this gateway has sent
    /// it and not had answered. That count includes the requests that crossed
    /// the READY on the wire, which `capacity` could not: the worker had not
    /// received them yet. Setting the credits to `capacity` would grant those
    /// slots twice. A worker not known here (new, or this gateway restarted)
    /// may still hold requests this gateway never sent, so it gets `capacity`.
    /// Without `share` (a verifier of the first protocol version) the credits
    /// are `capacity`, as that version meant.
    public mutating func ready(_ worker: WorkerID, capacity: Int, share: Int? = nil, now: ContinuousClock.Instant) -> [Dispatch] {
        let known = workers[worker] != nil
        workers[worker, default: Worker(limit: 0, lastSeen: now)].lastSeen = now
        workers[worker]?.draining = false
        let held = workers[worker]?.inFlight.count ?? 0
        workers[worker]?.limit = if known, let share { max(0, share) } else { max(0, capacity) + held }
        return dispatch(now: now)
    }

    /// Any other message from a known worker proves it alive; CREDIT adds credits.
    public mutating func heard(from worker: WorkerID, credits: Int = 0, now: ContinuousClock.Instant) -> [Dispatch] {
        guard workers[worker] != nil else { return [] }
        workers[worker]?.lastSeen = now
        workers[worker]?.limit += max(0, credits)
        return credits > 0 ? dispatch(now: now) : []
    }

    /// A send to the worker failed (it is gone): treat it as dead now.
    public mutating func lost(_ worker: WorkerID, now: ContinuousClock.Instant) -> (dispatches: [Dispatch], expired: [RequestID], dead: [WorkerID]) {
        workers[worker]?.lastSeen = now - deadAfter - .seconds(1)
        return tick(now: now)
    }

    /// A reply: true if it is the first for that request (deliver it), false for a duplicate.
    public mutating func replied(_ request: RequestID, from worker: WorkerID, now: ContinuousClock.Instant) -> (deliver: Bool, dispatches: [Dispatch]) {
        if let index = workers.index(forKey: worker) {
            workers.values[index].lastSeen = now
            workers.values[index].inFlight.remove(request)
        }
        let first = assigned.removeValue(forKey: request) != nil || queue.contains { $0.id == request }
        queue.removeAll { $0.id == request }
        return (first, dispatch(now: now))
    }

    /// The worker asked for no more work; what it holds it still answers.
    public mutating func draining(_ worker: WorkerID) {
        workers[worker]?.draining = true
    }

    /// The caller gave up on a request (its deadline passed or its client left).
    /// The worker keeps the request (and its credit) until it replies.
    public mutating func abandon(_ request: RequestID) {
        assigned.removeValue(forKey: request)
        queue.removeAll { $0.id == request }
    }

    /// When `tick` next has work: the earliest of a queued request's deadline,
    /// a dispatched one's deadline and grace, and a worker's death (last seen
    /// plus `deadAfter`); nil when none of these can fall due. Each is due at
    /// that instant, so a timer set to it finds it due.
    public var nextDue: ContinuousClock.Instant? {
        let queued = queue.lazy.map(\.deadline).min()
        let overdue = assigned.values.lazy.map { $0.deadline + Self.answerGrace }.min()
        let death = workers.values.lazy.map { $0.lastSeen + deadAfter }.min()
        return [queued, overdue, death].compactMap { $0 }.min()
    }

    /// Check what fell due (at `nextDue`, or at any time): dead workers leave
    /// and their requests are requeued; queued requests past their deadline are
    /// returned as expired.
    public mutating func tick(now: ContinuousClock.Instant) -> (dispatches: [Dispatch], expired: [RequestID], dead: [WorkerID]) {
        let dead = workers.filter { $0.value.lastSeen + deadAfter <= now }.map(\.key)
        var requeued: [Pending] = []
        for id in dead {
            guard let worker = workers.removeValue(forKey: id) else { continue }
            for request in worker.inFlight.sorted() {
                guard let entry = assigned.removeValue(forKey: request) else { continue }
                requeued.append(Pending(id: request, deadline: entry.deadline))
            }
        }
        redispatched += requeued.count
        queue.insert(contentsOf: requeued, at: 0)
        var expired = queue.filter { $0.deadline <= now }.map(\.id)
        queue.removeAll { $0.deadline <= now }
        // A verifier answers by the deadline itself; one that is alive but silent on a request
        // (a bug, a hang) must not keep its caller waiting for ever.
        let overdue = assigned.filter { $0.value.deadline + Self.answerGrace <= now }.map(\.key)
        for request in overdue { assigned.removeValue(forKey: request) }
        expired += overdue
        return (dispatch(now: now), expired, dead)
    }

    /// Gives queued requests to the workers with the most free credits.
    private mutating func dispatch(now: ContinuousClock.Instant) -> [Dispatch] {
        var dispatches: [Dispatch] = []
        while !queue.isEmpty, let index = preferredWorker() {
            let next = queue.removeFirst()
            dispatchCount += 1
            let id = workers.keys[index]
            workers.values[index].lastDispatch = dispatchCount
            workers.values[index].inFlight.insert(next.id)
            assigned[next.id] = (id, next.deadline)
            dispatches.append(Dispatch(worker: id, request: next.id))
        }
        return dispatches
    }

    /// The worker with free credits to give work to next, in one pass over
    /// the workers in place: a filtered copy of them cost a dictionary, with
    /// every key hashed again, per request (about 10,000 instructions of the
    /// gateway's 350,000 per verification under callgrind).
    private func preferredWorker() -> WorkerIndex? {
        var best: WorkerIndex?
        for index in workers.indices where workers.values[index].credits > 0 {
            if let current = best, !precedes(index, current) { continue }
            best = index
        }
        return best
    }

    /// Whether the worker at `a` is given work before the one at `b`: more
    /// free credits, then given work less recently, then the lower identity.
    private func precedes(_ a: WorkerIndex, _ b: WorkerIndex) -> Bool {
        let (first, second) = (workers.values[a], workers.values[b])
        if first.credits != second.credits { return first.credits > second.credits }
        if first.lastDispatch != second.lastDispatch { return first.lastDispatch < second.lastDispatch }
        return workers.keys[a].lexicographicallyPrecedes(workers.keys[b])
    }
}
