/// The loop of a request/reply client that does what falls due (requests past
/// their deadline, heartbeats): it sleeps until the next thing due, exactly,
/// and with nothing due it sleeps until woken, so an idle client never wakes.
/// Whoever adds something due sooner than the alarm wakes it early (see
/// `PendingRequests.wakeTimer(for:)`); a wake that comes before the loop
/// sleeps is kept for its next sleep (`Doorbell`).
public final class TimerLoop: Sendable {
    private let doorbell = Doorbell()

    public init() {}

    /// Ends the loop's sleep now: something is due sooner.
    public func wake() { doorbell.ring() }

    /// Runs until cancelled: each `turn`, given the time, does what is due
    /// and returns when the next thing is (nil: nothing is, sleep until woken).
    public func run(_ turn: (ContinuousClock.Instant) -> ContinuousClock.Instant?) async throws {
        while true {
            try Task.checkCancellation()
            await doorbell.wait(until: turn(.now))
        }
    }
}
