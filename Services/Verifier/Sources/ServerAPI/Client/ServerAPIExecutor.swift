import Contracts
import CurlHTTP
import Foundation
import Logging
import Metrics

/// Performs Server API calls: a token, the request for the environment the
/// state machine names, the exchange over the transport (the curl client),
/// the outcome back to the machine, and the waits it asks for. The answer
/// is decoded here, so an unreadable one is retried like Apple's other trouble.
struct ServerAPIExecutor: Sendable {
    typealias Transport = @Sendable (HTTPRequest) async throws(HTTPClientError) -> HTTPResponse

    let productionURL: String
    let sandboxURL: String
    let tokens: ServerAPITokens
    let connectTimeout: Duration
    let attemptTimeout: Duration
    let acceptSandbox: Bool
    let backoff: Backoff
    let transport: Transport
    /// For `Retry-After` given as a time.
    let wallClock: @Sendable () -> Date
    let logger: Logger

    /// The decoded answer and the environment that gave it; `decode` returns
    /// nil for a body that is not the answer.
    func perform<Answer: Sendable>(
        _ request: ServerAPIRequest, in start: AppleEnvironment, deadline: ContinuousClock.Instant,
        decode: ([UInt8]) -> Answer?
    ) async throws(ServerAPIError) -> (environment: AppleEnvironment, answer: Answer) {
        var machine = ServerAPICallStateMachine(
            start: start, fallsBackToSandbox: request.fallsBackToSandbox, acceptSandbox: acceptSandbox,
            deadline: deadline, backoff: backoff)
        var action = machine.begin()
        while true {
            switch action {
            case .call(let environment, let delay):
                if delay > .zero {
                    do { try await Task.sleep(for: delay) } catch { throw .cancelled }
                }
                let outcome = try await attempt(request, environment, deadline: deadline)
                action = machine.handle(outcome, now: .now, unit: Double.random(in: 0..<1))
            case .succeed(let environment, let body):
                guard let answer = decode(body) else {
                    action = machine.handle(.unreadable, now: .now, unit: Double.random(in: 0..<1))
                    continue
                }
                return (environment, answer)
            case .fail(let error):
                report(error, request)
                throw error
            }
        }
    }

    /// A JSON answer of Apple's shape `Answer`.
    func perform<Answer: Decodable & Sendable>(
        _ request: ServerAPIRequest, as type: Answer.Type, in start: AppleEnvironment, deadline: ContinuousClock.Instant
    ) async throws(ServerAPIError) -> (environment: AppleEnvironment, answer: Answer) {
        try await perform(request, in: start, deadline: deadline) { body in
            try? JSONDecoder().decode(Answer.self, from: Data(body))
        }
    }

    /// One exchange with one environment.
    private func attempt(
        _ request: ServerAPIRequest, _ environment: AppleEnvironment, deadline: ContinuousClock.Instant
    ) async throws(ServerAPIError) -> ServerAPIOutcome {
        guard !Task.isCancelled else { throw .cancelled }
        let timeLeft = max(.milliseconds(1), deadline - .now)
        let http = request.httpRequest(
            baseURL: environment == .sandbox ? sandboxURL : productionURL, token: try tokens.token(),
            connectTimeout: min(connectTimeout, timeLeft), totalTimeout: min(attemptTimeout, timeLeft))
        let started = ContinuousClock.now
        let outcome: ServerAPIOutcome
        do {
            let response = try await transport(http)
            outcome = ServerAPIOutcome.classify(response, nowMs: Int64(wallClock().timeIntervalSince1970 * 1_000))
        } catch {
            if error == .cancelled { throw .cancelled }
            outcome = ServerAPIOutcome.classify(error)
        }
        // A refused token may have been fine a moment ago (a clock that jumped): sign afresh next time.
        if outcome == .unauthorized { tokens.invalidate() }
        Self.record(request, environment, outcome, duration: .now - started)
        return outcome
    }

    /// 401 and refused requests are Storekeeper's to fix: errors. Apple's trouble is not.
    private func report(_ error: ServerAPIError, _ request: ServerAPIRequest) {
        let metadata: Logger.Metadata = [
            "apple.api": "\(request.name)", "apple.error_code": "\(error.appleErrorCode?.rawValue ?? 0)",
            "http.status": "\(error.httpStatus.map(String.init) ?? "-")", "failure": "\(error)",
        ]
        if error.isUnauthorized {
            logger.error(
                "Apple refused the App Store Server API credentials: check STOREKEEPER_APPLE_ISSUER_ID, STOREKEEPER_APPLE_KEY_ID and STOREKEEPER_APPLE_PRIVATE_KEY_FILE",
                metadata: metadata)
        } else if error.isRejected, error.httpStatus != 403 {
            logger.error("Apple refused a Server API request Storekeeper built", metadata: metadata)
        } else {
            logger.info("Server API call failed", metadata: metadata)
        }
    }

    /// Bounded dimensions: the endpoint's name, the environment and the outcome's class.
    private static func record(
        _ request: ServerAPIRequest, _ environment: AppleEnvironment, _ outcome: ServerAPIOutcome, duration: Duration
    ) {
        let label: String
        switch outcome {
        case .answered: label = "ok"
        case .notFound: label = "not_found"
        case .unauthorized: label = "unauthorized"
        case .rateLimited: label = "rate_limited"
        case .unavailable(let status, _): label = "http_\(status / 100)xx"
        case .transportFailed: label = "transport_error"
        case .rejected(let status, _, _): label = "http_\(status)"
        case .unreadable: label = "unreadable"
        }
        Timer(
            label: "storekeeper_apple_api_request_duration_seconds",
            dimensions: [
                ("endpoint", request.name), ("environment", environment == .sandbox ? "sandbox" : "production"),
                ("outcome", label),
            ]
        ).recordNanoseconds(duration.nanoseconds)
    }
}
