/// Exponential back-off with full jitter (the delay is uniform in
/// [0, min(cap, base * 2^attempt)]), so many verifiers retrying after one
/// Apple hiccup spread out instead of arriving together. Apple's
/// `Retry-After` wins when it asks for longer.
public struct Backoff: Sendable {
    public var base: Duration
    public var cap: Duration

    public init(base: Duration = .milliseconds(250), cap: Duration = .seconds(8)) {
        self.base = base
        self.cap = cap
    }

    /// The delay before retry number `retry` (1 for the first retry).
    /// `unit` is a random number in [0, 1) (injected so tests are exact).
    public func delay(beforeRetry retry: Int, retryAfter: Duration?, unit: Double) -> Duration {
        let exponent = min(max(retry - 1, 0), 30)
        let ceiling = min(cap, base * (1 << exponent))
        let jittered = ceiling * max(0, min(unit, 1))
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, cap * 4))
    }
}
