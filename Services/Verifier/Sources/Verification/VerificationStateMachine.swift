import AppleFormats
import Contracts

/// The decisions of one verification, without sockets or clocks: which
/// environment to call next and when, and when to stop. The caller performs
/// the calls and reports each outcome.
///
/// - production first; 21007 moves to sandbox, 21008 (when we started at
///   sandbox) to production, at most one switch, with no back-off;
/// - 21002 is retried once, then the receipt is invalid;
/// - 21000 and an HTTP 4xx other than 429 mean the request we built is wrong:
///   failed at once, never retried;
/// - Apple's trouble (21005, 21009, retryable 211xx, HTTP errors, time-outs,
///   unreadable bodies, an open circuit) is retried with back-off while the
///   next attempt still fits before the deadline, then reported unavailable.
public struct VerificationStateMachine: Sendable {
    public enum Outcome: Sendable {
        /// Apple answered 200 with a verifyReceipt body.
        case answered(AppleResponse)
        /// A non-200 HTTP status (5xx, 429, a proxy's 4xx).
        case httpStatus(Int, retryAfter: Duration?)
        /// Connection refused or reset, time-out, TLS failure.
        case transportFailure
        /// 200 with a body that is not a verifyReceipt answer.
        case unreadable
        /// This verifier's circuit breaker for the endpoint is open.
        case circuitOpen(retryAfter: Duration)
    }

    public enum Action: Sendable {
        case call(AppleEnvironment, after: Duration)
        case succeed(AppleEnvironment, AppleResponse)
        case fail(VerifyFailure)
    }

    /// No attempt is started with less than this left before the deadline.
    public static let minimumAttempt: Duration = .milliseconds(200)

    private let deadline: ContinuousClock.Instant
    private let backoff: Backoff
    private var environment: AppleEnvironment
    private var switchedEnvironment = false
    private var malformedSeen = false
    private var retries = 0
    private var lastAppleStatus: Int?

    public private(set) var fallbacks = 0
    public private(set) var retryCount = 0

    public init(start: AppleEnvironment, deadline: ContinuousClock.Instant, backoff: Backoff = Backoff()) {
        self.environment = start == .sandbox ? .sandbox : .production
        self.deadline = deadline
        self.backoff = backoff
    }

    public func begin() -> Action {
        .call(environment, after: .zero)
    }

    /// `unit` is a random number in [0, 1) for the jitter, asked for only when a retry needs it
    /// (in the verifier, each draw is a `getrandom` system call).
    public mutating func handle(_ outcome: Outcome, now: ContinuousClock.Instant, unit: @autoclosure () -> Double) -> Action {
        switch outcome {
        case .answered(let response):
            lastAppleStatus = response.status
            return handle(response, now: now, unit: unit)
        case .httpStatus(let status, let retryAfter):
            // The failure reports the status of the last attempt only.
            lastAppleStatus = nil
            if (400...499).contains(status), status != 429 {
                return .fail(.appleRejectedRequest(appleStatus: nil, httpStatus: status))
            }
            return retry(now: now, unit: unit, retryAfter: retryAfter)
        case .transportFailure, .unreadable:
            lastAppleStatus = nil
            return retry(now: now, unit: unit, retryAfter: nil)
        case .circuitOpen(let retryAfter):
            lastAppleStatus = nil
            return retry(now: now, unit: unit, retryAfter: retryAfter)
        }
    }

    private mutating func handle(_ response: AppleResponse, now: ContinuousClock.Instant, unit: () -> Double) -> Action {
        switch response.statusClass {
        case .valid:
            return .succeed(environment, response)
        case .sandboxReceiptAtProduction where environment == .production && !switchedEnvironment:
            return switchTo(.sandbox)
        case .productionReceiptAtSandbox where environment == .sandbox && !switchedEnvironment:
            return switchTo(.production)
        case .sandboxReceiptAtProduction, .productionReceiptAtSandbox:
            // Both environments disowned the receipt.
            return .fail(.receiptInvalid(appleStatus: response.status))
        case .malformedRetryOnce:
            if malformedSeen { return .fail(.receiptInvalid(appleStatus: response.status)) }
            malformedSeen = true
            return retry(now: now, unit: unit, retryAfter: nil)
        case .invalid:
            return .fail(.receiptInvalid(appleStatus: response.status))
        case .sharedSecretMismatch:
            return .fail(.sharedSecretMismatch)
        case .rejectedRequest:
            return .fail(.appleRejectedRequest(appleStatus: response.status, httpStatus: nil))
        case .retryable:
            return retry(now: now, unit: unit, retryAfter: nil)
        }
    }

    private mutating func switchTo(_ other: AppleEnvironment) -> Action {
        environment = other
        // 21007/21008 was the other environment's word; a later failure reports sandbox's own.
        lastAppleStatus = nil
        switchedEnvironment = true
        fallbacks += 1
        return .call(other, after: .zero)
    }

    private mutating func retry(now: ContinuousClock.Instant, unit: () -> Double, retryAfter: Duration?) -> Action {
        retries += 1
        let delay = backoff.delay(beforeRetry: retries, retryAfter: retryAfter, unit: unit())
        guard now + delay + Self.minimumAttempt <= deadline else {
            // Tell the client when trying again is worth it: at least a second.
            let hint = max(.seconds(1), retryAfter ?? .zero)
            return .fail(.appleUnavailable(appleStatus: lastAppleStatus, retryAfter: hint))
        }
        retryCount += 1
        return .call(environment, after: delay)
    }
}
