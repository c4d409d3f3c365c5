/// When the gateway's end of the pool sends HEARTBEAT to its verifiers: every
/// `interval` while any is connected (the protocol's liveness, which each
/// verifier needs to tell a live gateway from a silent one), never while none
/// is, so that an idle gateway's timer loop does not wake. No clock: the
/// caller passes the time.
struct HeartbeatSchedule: Sendable {
    let interval: Duration
    /// When the next heartbeat goes out; nil while no verifier is connected.
    private(set) var next: ContinuousClock.Instant?

    init(interval: Duration) {
        self.interval = interval
    }

    /// A verifier connected: when the beat begins, if it had stopped (the
    /// timer loop must wake for it); nil when it goes on as it was.
    mutating func peerJoined(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard next == nil else { return nil }
        next = now + interval
        return next
    }

    /// At a turn of the timer loop, with whether any verifier is connected:
    /// true when heartbeats go out now.
    mutating func due(now: ContinuousClock.Instant, peers: Bool) -> Bool {
        guard peers else {
            next = nil
            return false
        }
        guard let next else {
            self.next = now + interval
            return false
        }
        guard next <= now else { return false }
        self.next = now + interval
        return true
    }
}
