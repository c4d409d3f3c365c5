/// The bookkeeping every request/reply client over ZeroMQ repeats, as a value
/// that takes events and returns what to do: correlation ids, the requests
/// waiting for their answers (each with its deadline and what it sent), an
/// answer delivered once, cancellation, failing everything when the client
/// stops, expiry, and when the client's timer loop must wake next. No
/// sockets, no clock, no lock (the client keeps it in a `Mutex`, beside
/// whatever else it must change in the same step), no real continuations
/// (`Waiter` is generic so tests drive it with plain values).
///
/// Whatever it hands back (a waiter to resume, "wake the timer") the client
/// does after it lets go of the lock: a continuation resumed inside the lock
/// could run its caller there.
///
/// The timer loop (`TimerLoop`) sleeps until the alarm `timerSleeps` returns,
/// the earliest deadline (or the client's own next due instant), and with
/// nothing due does not wake at all; a request due sooner than the alarm
/// wakes it (`RequestAdmission.waiting(wakeTimer: true)`, `wakeTimer(for:)`).
public struct PendingRequests<Waiter, Payload>: ~Copyable {
    public typealias ID = UInt64

    /// A request waiting for its answer.
    public struct Entry {
        public let id: ID
        public let waiter: Waiter
        /// When it fails unanswered.
        public let deadline: ContinuousClock.Instant
        /// What it sent, for a client that may send it again (the verifier pool).
        public let payload: Payload
    }

    /// Where the timer loop is: awake (it will look at everything before it
    /// sleeps again, so nothing needs to wake it), or asleep until an alarm
    /// (nil: until woken).
    private enum Timer {
        case awake
        case asleep(until: ContinuousClock.Instant?)
    }

    private var lastID: ID
    private var waiting: [ID: Entry] = [:]
    /// Ids handed out whose requests have not come to wait yet, and whether
    /// their task was cancelled meanwhile: a cancellation that found nothing to
    /// withdraw must still end the request when it comes.
    private var reserved: [ID: Bool] = [:]
    public private(set) var stopped = false
    private var timer = Timer.awake
    /// How many turns the timer loop took (tests: an idle client takes none).
    public private(set) var timerWakeups = 0

    /// - Parameter lastID: ids are handed out from the one after it.
    public init(idsAfter lastID: ID = 0) {
        self.lastID = lastID
    }

    /// Requests waiting now.
    public var count: Int { waiting.count }

    /// What the request `id` sent, while it waits.
    public func payload(of id: ID) -> Payload? { waiting[id]?.payload }

    public func isWaiting(_ id: ID) -> Bool { waiting[id] != nil }

    // MARK: A request's life

    /// A fresh correlation id, taken before the request waits so that a
    /// cancellation handler can name it.
    public mutating func makeID() -> ID {
        lastID &+= 1
        reserved[lastID] = false
        return lastID
    }

    /// The request `id` (from `makeID`) waits for its answer until `deadline`.
    public mutating func wait(_ id: ID, waiter: Waiter, deadline: ContinuousClock.Instant, payload: Payload)
        -> RequestAdmission
    {
        if reserved.removeValue(forKey: id) == true { return .cancelled }
        guard !stopped else { return .refused }
        waiting[id] = Entry(id: id, waiter: waiter, deadline: deadline, payload: payload)
        return .waiting(wakeTimer: wakeTimer(for: deadline))
    }

    /// The answer to `id` came: its waiter, to resume with it; nil when nobody
    /// waits for it any more (answered, expired, cancelled, or not ours).
    public mutating func answered(_ id: ID) -> Waiter? {
        waiting.removeValue(forKey: id)?.waiter
    }

    /// The client gave up on these requests for a reason of its own (the
    /// verifier pool's dispatcher): their waiters, to fail.
    public mutating func failed(_ ids: some Sequence<ID>) -> [Waiter] {
        ids.compactMap { waiting.removeValue(forKey: $0)?.waiter }
    }

    /// The task of request `id` was cancelled: its waiter, to fail with
    /// `CancellationError`; nil when it no longer waits, or does not wait yet
    /// (then `wait` answers `.cancelled`).
    public mutating func cancel(_ id: ID) -> Waiter? {
        if reserved[id] != nil {
            reserved[id] = true
            return nil
        }
        return waiting.removeValue(forKey: id)?.waiter
    }

    /// The client stopped: every waiter, to fail; requests from now on are refused.
    public mutating func stop() -> [Waiter] {
        stopped = true
        defer { waiting = [:] }
        return waiting.values.map(\.waiter)
    }

    // MARK: The timer loop

    /// The timer loop woke at `now`: the requests past their deadline leave
    /// the table, returned to be failed.
    public mutating func timerWoke(now: ContinuousClock.Instant) -> [Entry] {
        timer = .awake
        timerWakeups += 1
        let expired = waiting.values.filter { $0.deadline <= now }
        for entry in expired { waiting.removeValue(forKey: entry.id) }
        return expired
    }

    /// The timer loop goes to sleep: until the earliest deadline waiting or
    /// `alsoDue` (the client's own next due instant), whichever comes first;
    /// nil when neither is, to sleep until woken.
    public mutating func timerSleeps(alsoDue: ContinuousClock.Instant? = nil) -> ContinuousClock.Instant? {
        let alarm = [waiting.values.lazy.map(\.deadline).min(), alsoDue].compactMap { $0 }.min()
        timer = .asleep(until: alarm)
        return alarm
    }

    /// Something falls due at `instant` (a request's deadline, or the
    /// client's own: a heartbeat, a peer's death): true when the timer loop
    /// sleeps past it and must be woken now. True at most once a sleep.
    public mutating func wakeTimer(for instant: ContinuousClock.Instant) -> Bool {
        guard case .asleep(let alarm) = timer, alarm.map({ instant < $0 }) ?? true else { return false }
        timer = .awake
        return true
    }
}
