/// One Apple endpoint's circuit breaker, as a value-type state machine with
/// the clock passed in. After `threshold` failures in a row it opens: calls
/// are refused at once (no hammering Apple during an outage) until
/// `cooldown` has passed; then one probe is let through (half-open), whose
/// outcome closes or re-opens it.
public struct CircuitBreaker: Sendable {
    public enum State: Equatable, Sendable {
        case closed(consecutiveFailures: Int)
        case open(until: ContinuousClock.Instant)
        case halfOpen(probeInFlight: Bool)
    }

    public private(set) var state: State = .closed(consecutiveFailures: 0)
    public let threshold: Int
    public let cooldown: Duration

    public init(threshold: Int = 8, cooldown: Duration = .seconds(2)) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    /// Whether a call may go out now; a `true` from half-open reserves the probe.
    public mutating func allowCall(now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed:
            return true
        case .open(let until):
            guard now >= until else { return false }
            state = .halfOpen(probeInFlight: true)
            return true
        case .halfOpen(let probeInFlight):
            if probeInFlight { return false }
            state = .halfOpen(probeInFlight: true)
            return true
        }
    }

    /// Apple answered (any status that is not Apple's own trouble).
    public mutating func recordSuccess() {
        state = .closed(consecutiveFailures: 0)
    }

    /// Apple failed (5xx, time-out, connection error, 21005/21009/retryable 211xx).
    public mutating func recordFailure(now: ContinuousClock.Instant) {
        switch state {
        case .closed(let failures):
            state = failures + 1 >= threshold ? .open(until: now + cooldown) : .closed(consecutiveFailures: failures + 1)
        case .halfOpen, .open:
            state = .open(until: now + cooldown)
        }
    }

    /// When refused, how long until a call may be tried again.
    public func retryAfter(now: ContinuousClock.Instant) -> Duration {
        if case .open(let until) = state, until > now { return until - now }
        return .zero
    }
}
