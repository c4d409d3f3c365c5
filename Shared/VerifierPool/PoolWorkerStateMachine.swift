/// A pool worker's side of the protocol as a pure state machine: how many
/// requests it holds, how many credits its gateway is believed to hold, when
/// to announce its free capacity (READY) again, and how to leave. No sockets,
/// no clock: `PoolWorker` feeds it events with the time and sends what it
/// returns.
///
/// Credits: READY(free, share) sets the gateway's credits to `share` less
/// what it has sent this worker and not had answered, each REQUEST takes one
/// and each REPLY gives one back, so while nothing changes `inFlight +
/// credits` stays at the worker's share. The requests that cross a READY on
/// the wire are counted here as they arrive, and the gateway counted them
/// already. When the share changes (the verifier's capacity follows what each
/// pool uses, `CapacitySplit`), the tick that learns it announces `share -
/// inFlight`. When the worker holds more than a smaller share, it announces
/// READY(0) whenever its replies return credits, until it is under the share
/// again: a gateway of the protocol's first release sets its credits to the
/// free capacity and counts a credit for every reply. Requests already sent
/// cannot be taken back, so that excess drains as they are answered.
///
/// A READY that cannot go at once (libzmq's queue to the gateway is full) is
/// not waited for: `announcementFailed` has the next tick announce again,
/// whatever the credits are then, and the usage reports say a READY is
/// pending meanwhile.
struct PoolWorkerStateMachine: Sendable {
    /// How a leaving worker goes.
    enum Departure: Equatable, Sendable {
        /// The gateway is alive: DISCONNECT, answer what it holds, then stop.
        case goodbye
        /// The gateway has been silent past `gatewayDeadAfter`: nobody would
        /// take a goodbye or an answer, so drop the connection and what is
        /// queued on it now.
        case dropAtOnce
    }

    let gatewayDeadAfter: Duration
    private(set) var inFlight = 0
    /// What the gateway is believed to hold: exact but for messages crossing on the wire.
    private(set) var credits: Int
    private(set) var leaving = false
    /// Since the last `takeUsage`: the most requests held at once, and whether the gateway used up its credits.
    private var peak = 0
    private var starved = false
    /// The last READY did not go: the gateway has not learnt of `credits`.
    private var announcementPending = false
    private var lastHeard: ContinuousClock.Instant
    private var lastReannounced: ContinuousClock.Instant

    /// Starts with READY(`share`), which the caller sends.
    init(share: Int, gatewayDeadAfter: Duration, now: ContinuousClock.Instant) {
        self.credits = max(0, share)
        self.gatewayDeadAfter = gatewayDeadAfter
        self.lastHeard = now
        self.lastReannounced = now
    }

    var isIdle: Bool { inFlight == 0 }

    func gatewayIsSilent(now: ContinuousClock.Instant) -> Bool { now - lastHeard > gatewayDeadAfter }

    /// Any message from the gateway.
    mutating func heard(now: ContinuousClock.Instant) {
        lastHeard = now
    }

    /// A REQUEST arrived: it took a credit (or one the worker did not know of, when none is left).
    mutating func took(now: ContinuousClock.Instant) {
        lastHeard = now
        inFlight += 1
        credits = max(0, credits - 1)
        peak = max(peak, inFlight)
        if credits == 0 { starved = true }
    }

    /// What the worker used since the last call, for its verifier's capacity split.
    ///
    /// A pending READY is reported only while the gateway is heard from: one
    /// silent past `gatewayDeadAfter` is gone, restarted (it forgot the
    /// credits), or cut off from this worker, whose queue to it is full and
    /// whose messages therefore do not reach it either, so it has counted the
    /// worker dead and dropped its credits too.
    mutating func takeUsage(now: ContinuousClock.Instant) -> CapacitySplit.Usage {
        defer {
            peak = inFlight
            starved = false
        }
        return CapacitySplit.Usage(
            inFlight: inFlight, peak: peak, starved: starved,
            announcementPending: announcementPending && !gatewayIsSilent(now: now))
    }

    /// A REPLY went out: it gives its credit back (a leaving worker's credits no longer count).
    mutating func answered() {
        inFlight = max(0, inFlight - 1)
        if !leaving { credits += 1 }
    }

    /// Once a heartbeat, with the share in force now: the free capacity to
    /// announce (READY), or nil.
    mutating func tick(share newShare: Int, now: ContinuousClock.Instant) -> Int? {
        guard !leaving else { return nil }
        let free = max(0, newShare - inFlight)
        // Paranoid Pirate: a gateway silent this long may have restarted and forgotten this
        // worker; announce again, once per silent period.
        if gatewayIsSilent(now: now) && now - lastReannounced > gatewayDeadAfter {
            lastReannounced = now
            return announce(free)
        }
        guard credits != free || announcementPending else { return nil }
        return announce(free)
    }

    private mutating func announce(_ free: Int) -> Int {
        credits = free
        announcementPending = false
        return free
    }

    /// The READY the last tick returned could not be sent: the next tick returns one again.
    mutating func announcementFailed() {
        announcementPending = true
    }

    /// Asked to leave (graceful shutdown, or its address left DNS).
    mutating func leave(now: ContinuousClock.Instant) -> Departure {
        leaving = true
        credits = 0
        return gatewayIsSilent(now: now) ? .dropAtOnce : .goodbye
    }
}
