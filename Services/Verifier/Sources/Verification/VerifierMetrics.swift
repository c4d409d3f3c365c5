import Contracts
import Metrics
import StorekeeperCore

/// The verifier's metrics. Dimensions are bounded: environment, and Apple's
/// status or the HTTP outcome class, never a receipt or user.
struct VerifierMetrics: Sendable {
    let inFlight = Gauge(label: "storekeeper_verifier_in_flight")
    let coalesced = Counter(label: "storekeeper_verifier_coalesced_total")
    let retries = Counter(label: "storekeeper_apple_retries_total")
    let fallbacks = Counter(label: "storekeeper_apple_environment_fallbacks_total")

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
        Timer(
            label: "storekeeper_apple_request_duration_seconds",
            dimensions: [("environment", environment.label), ("status", status)]
        ).recordNanoseconds(duration.nanoseconds)
    }
}
