import Contracts
import Metrics
import StorekeeperCore

/// The verifier's metrics. Dimensions are bounded: environment, and Apple's
/// status or the HTTP outcome class, never a receipt or user.
struct VerifierMetrics: Sendable {
    let inFlight: Gauge
    let coalesced: Counter
    let retries: Counter
    let fallbacks: Counter
    private let callDurations: CallDurations

    /// - Parameter factory: where the metrics go: the process's (Prometheus) unless a test gives its own.
    init(factory: any MetricsFactory) {
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
