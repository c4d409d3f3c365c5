import Contracts
import CurlHTTP

/// The decisions of one Server API call, without sockets or clocks: which
/// environment to ask next and when, and when to stop. The caller performs
/// each call and reports its outcome.
///
/// - A call about a transaction asks production first; production's "no such
///   transaction" (4040010, 4040005) moves it to sandbox once, with no delay
///   (verifyReceipt's 21007 rule). Unless sandbox is not accepted: then it
///   is not found.
/// - 401 is a configuration error: failed at once, never retried.
/// - 429 is retried after Apple's `Retry-After`; 5xx, Apple's retryable codes,
///   time-outs and unreadable answers with back-off; all only while an
///   attempt still fits before the deadline, then `unavailable`.
/// - Any other 4xx fails at once: the same request would be refused again.
struct ServerAPICallStateMachine: Sendable {
    enum Action: Sendable, Equatable {
        case call(AppleEnvironment, after: Duration)
        case succeed(AppleEnvironment, [UInt8])
        case fail(ServerAPIError)
    }

    private let deadline: ContinuousClock.Instant
    private let backoff: Backoff
    private let fallsBackToSandbox: Bool
    private let acceptSandbox: Bool
    private var environment: AppleEnvironment
    private var switchedEnvironment = false
    private var lastStatus: Int?
    /// Why the tries since Apple's last answer had none: what an operator needs to see (TLS, a refused connection).
    private var lastTransportFailure: HTTPClientError?

    private(set) var retryCount = 0

    init(
        start: AppleEnvironment, fallsBackToSandbox: Bool, acceptSandbox: Bool, deadline: ContinuousClock.Instant,
        backoff: Backoff = Backoff()
    ) {
        self.environment = start == .sandbox ? .sandbox : .production
        self.fallsBackToSandbox = fallsBackToSandbox && start != .sandbox
        self.acceptSandbox = acceptSandbox
        self.deadline = deadline
        self.backoff = backoff
    }

    func begin() -> Action {
        if environment == .sandbox, !acceptSandbox { return .fail(.sandboxNotAccepted) }
        return .call(environment, after: .zero)
    }

    /// `unit` is a random number in [0, 1) for the back-off's jitter, asked for only when a retry needs it.
    mutating func handle(_ outcome: ServerAPIOutcome, now: ContinuousClock.Instant, unit: @autoclosure () -> Double) -> Action {
        switch outcome {
        case .answered(let body):
            return .succeed(environment, body)
        case .notFound(let code):
            guard code.isTransactionNotFound, fallsBackToSandbox, !switchedEnvironment else { return .fail(.notFound(code)) }
            // Production does not know it; nothing from the sandbox would be used: do not ask it.
            guard acceptSandbox else { return .fail(.notFound(code)) }
            switchedEnvironment = true
            environment = .sandbox
            return .call(.sandbox, after: .zero)
        case .unauthorized:
            return .fail(.unauthorized)
        case .rateLimited(let retryAfter):
            lastStatus = 429
            lastTransportFailure = nil
            return retry(now: now, unit: unit, retryAfter: retryAfter)
        case .unavailable(let status, let retryAfter):
            lastStatus = status
            lastTransportFailure = nil
            return retry(now: now, unit: unit, retryAfter: retryAfter)
        case .transportFailed(let failure):
            // The failure reports the last answer Apple gave too: a time-out after a 429 is still rate limiting.
            // A try's time-out is what is left of the deadline, so the last try often ends in one: it
            // does not hide the cause an earlier try named (a TLS failure on a loaded machine).
            if failure != .timedOut || lastTransportFailure == nil { lastTransportFailure = failure }
            return retry(now: now, unit: unit, retryAfter: nil)
        case .unreadable:
            lastTransportFailure = nil
            return retry(now: now, unit: unit, retryAfter: nil)
        case .rejected(let status, let code, let message):
            return .fail(.rejected(status: status, code: code, message: message))
        }
    }

    /// Apple's `Retry-After` is waited for as given (only the deadline bounds it):
    /// a retry sooner would only be refused again.
    private mutating func retry(now: ContinuousClock.Instant, unit: () -> Double, retryAfter: Duration?) -> Action {
        let delay = max(backoff.delay(beforeRetry: retryCount + 1, retryAfter: nil, unit: unit()), retryAfter ?? .zero)
        guard now + delay + VerificationStateMachine.minimumAttempt <= deadline else {
            return .fail(
                .unavailable(
                    retryAfter: max(.seconds(1), retryAfter ?? .zero), httpStatus: lastStatus,
                    transportFailure: lastTransportFailure))
        }
        retryCount += 1
        return .call(environment, after: delay)
    }
}
