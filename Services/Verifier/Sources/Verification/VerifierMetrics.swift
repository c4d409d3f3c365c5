import Contracts
import Metrics
import StorekeeperCore
import Synchronization

/// The verifier's metrics. Dimensions are bounded: environment, and Apple's
/// status or the HTTP outcome class, never a receipt or user.
struct VerifierMetrics: Sendable {
    /// Where the metrics go: the process's (Prometheus) unless a test gives its own.
    let factory: any MetricsFactory
    let inFlight: Gauge
    let coalesced: Counter
    let retries: Counter
    let fallbacks: Counter
    private let callDurations: CallDurations

    init(factory: any MetricsFactory) {
        self.factory = factory
        inFlight = Gauge(label: "storekeeper_verifier_in_flight", factory: factory)
        coalesced = Counter(label: "storekeeper_verifier_coalesced_total", factory: factory)
        retries = Counter(label: "storekeeper_apple_retries_total", factory: factory)
        fallbacks = Counter(label: "storekeeper_apple_environment_fallbacks_total", factory: factory)
        callDurations = CallDurations(factory: factory)
    }

    func record(fallbacks count: Int, retries retryCount: Int) {
        if count > 0 { fallbacks.increment(by: count) }
        if retryCount > 0 { retries.increment(by: retryCount) }
    }

    func recordCall(
        environment: AppleEnvironment, outcome: VerificationStateMachine.Outcome, duration: Duration
    ) {
        let status: String
        switch outcome {
        case .answered(let response): status = String(response.status)
        case .httpStatus(let code, _): status = "http_\(code / 100)xx"
        case .transportFailure: status = "transport_error"
        case .unreadable: status = "unreadable"
        case .circuitOpen: status = "circuit_open"
        }
        callDurations.timer(environment: environment.label, status: status).recordNanoseconds(duration.nanoseconds)
    }
}

/// `storekeeper_apple_request_duration_seconds` by environment and status, each
/// made once. Made per call, every Apple call paid for the factory's name check,
/// its registry look-up and a new histogram handle (about 6k instructions,
/// bench/README "2026-11-28, 19:53").
final class CallDurations: Sendable {
    static let label = "storekeeper_apple_request_duration_seconds"
    /// Apple's statuses are a short documented list; past this many pairs (an Apple
    /// inventing statuses) a timer is made per call, as before, rather than kept.
    static let kept = 256

    private let factory: any MetricsFactory
    private let timers = Mutex<[Key: Timer]>([:])

    private struct Key: Hashable {
        let environment: String
        let status: String
    }

    init(factory: any MetricsFactory) { self.factory = factory }

    func timer(environment: String, status: String) -> Timer {
        let key = Key(environment: environment, status: status)
        if let timer = timers.withLock({ $0[key] }) { return timer }
        let timer = Timer(
            label: Self.label, dimensions: [("environment", environment), ("status", status)], factory: factory)
        timers.withLock { if $0.count < Self.kept { $0[key] = timer } }
        return timer
    }

    /// How many timers are kept (tests).
    var count: Int { timers.withLock(\.count) }
}
