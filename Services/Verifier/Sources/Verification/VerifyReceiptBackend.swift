import AppleFormats
import Contracts
import CurlHTTP
import Logging
import StorekeeperCore
import Synchronization

/// `STOREKEEPER_RECEIPT_VERIFICATION=verify_receipt` (the default): Apple's
/// verifyReceipt, with the environment fallback, retries within the deadline,
/// a circuit breaker per endpoint, the bundle check, and normalization of the
/// answer.
final class VerifyReceiptBackend: ReceiptBackend {
    var checksSignatures: Bool { false }

    private let caller: AppleCaller
    private let bundleRule: BundleRule
    /// `STOREKEEPER_ACCEPT_SANDBOX`: false fails a receipt instead of asking the sandbox.
    private let acceptSandbox: Bool
    private let backoff: Backoff
    private let metrics: VerifierMetrics
    private let breakers = Mutex<[AppleEnvironment: CircuitBreaker]>([:])

    init(
        settings: AppleSettings, backoff: Backoff, metrics: VerifierMetrics,
        transport: @escaping @Sendable (HTTPRequest) async throws(HTTPClientError) -> HTTPResponse
    ) {
        caller = AppleCaller(
            productionURL: settings.productionURL, sandboxURL: settings.sandboxURL, sharedSecret: settings.sharedSecret,
            connectTimeout: settings.connectTimeout, attemptTimeout: settings.attemptTimeout, transport: transport)
        bundleRule = BundleRule(allowed: settings.bundleIDs)
        acceptSandbox = settings.acceptSandbox
        self.backoff = backoff
        self.metrics = metrics
    }

    /// Apple's answer depends on all three: exclude-old-transactions is sent, and the start decides the fallback.
    func coalescingKey(_ request: VerifyRequest, digest: String) -> ReceiptCoalescingKey {
        ReceiptCoalescingKey(
            receiptSHA256: digest, excludeOldTransactions: request.excludeOldTransactions,
            start: request.startEnvironment)
    }

    func verify(
        _ request: VerifyRequest, digest: String, deadline: ContinuousClock.Instant, logger: Logger
    ) async -> Result<VerifyResult, VerifyFailure> {
        var machine = VerificationStateMachine(start: request.startEnvironment, deadline: deadline, backoff: backoff)
        var action = machine.begin()
        while true {
            switch action {
            case .call(.sandbox, _) where !acceptSandbox:
                // Nothing from the sandbox would be recorded: do not ask it.
                logger.info("sandbox receipt refused (STOREKEEPER_ACCEPT_SANDBOX=false)")
                return .failure(.sandboxNotAccepted)
            case .call(let environment, let delay):
                if delay > .zero { try? await Task.sleep(for: delay) }
                let outcome = await attempt(environment, request, deadline: deadline)
                action = machine.handle(outcome, now: .now, unit: Double.random(in: 0..<1))
            case .succeed(let environment, let response):
                return finish(response, from: environment, digest: digest, machine: machine, logger: logger)
            case .fail(let failure):
                return fail(failure, machine: machine, logger: logger)
            }
        }
    }

    // `finish`, `fail` and `attempt` stay out of line: inlined, their values
    // would sit in `verify`'s async frame, which every call in flight holds
    // while Apple answers (bench/JOURNAL.md, "2026-11-28").

    /// Apple's answer, normalized, unless the receipt is another bundle's.
    @inline(never)
    private func finish(
        _ response: AppleResponse, from environment: AppleEnvironment, digest: String,
        machine: VerificationStateMachine, logger: Logger
    ) -> Result<VerifyResult, VerifyFailure> {
        metrics.record(fallbacks: machine.fallbacks, retries: machine.retryCount)
        var result = ReceiptNormalizer.normalize(response, environment: environment, receiptSHA256: digest)
        if bundleRule.verdict(for: result.bundleID, whenUnconfigured: .acceptAny) != .accepted {
            logger.notice("receipt of another bundle", metadata: ["receipt.bundle_id": "\(result.bundleID)"])
            return .failure(.bundleMismatch(bundleID: result.bundleID))
        }
        result.receiptSha256 = digest
        logger.info(
            "receipt verified",
            metadata: [
                "apple.environment": "\(environment.label)",
                "apple.status": "\(result.appleStatus)", "apple.retries": "\(machine.retryCount)",
                "receipt.transactions": "\(result.transactions.count)",
            ])
        return .success(result)
    }

    @inline(never)
    private func fail(
        _ failure: VerifyFailure, machine: VerificationStateMachine, logger: Logger
    ) -> Result<VerifyResult, VerifyFailure> {
        metrics.record(fallbacks: machine.fallbacks, retries: machine.retryCount)
        if case .appleRejectedRequest(let status, let http) = failure {
            logger.error(
                "Apple refused the request Storekeeper built: a bug or a misconfigured URL",
                metadata: ["apple.status": "\(status.map(String.init) ?? "-")", "http.status": "\(http.map(String.init) ?? "-")"])
        } else {
            logger.info("verification failed", metadata: ["failure": "\(failure)"])
        }
        return .failure(failure)
    }

    /// One call to Apple, unless that endpoint's breaker is open.
    @inline(never)
    private func attempt(
        _ environment: AppleEnvironment, _ request: VerifyRequest, deadline: ContinuousClock.Instant
    ) async -> VerificationStateMachine.Outcome {
        let allowed = breakers.withLock { breakers -> Duration? in
            var breaker = breakers[environment] ?? CircuitBreaker()
            defer { breakers[environment] = breaker }
            return breaker.allowCall(now: .now) ? nil : breaker.retryAfter(now: .now)
        }
        if let wait = allowed { return .circuitOpen(retryAfter: max(wait, .milliseconds(100))) }
        let started = ContinuousClock.now
        let outcome = await caller.call(
            environment, receipt: request.receiptData, excludeOldTransactions: request.excludeOldTransactions,
            timeLeft: max(.milliseconds(1), deadline - started))
        let appleTrouble: Bool
        switch outcome {
        case .answered(let response): appleTrouble = response.statusClass == .retryable
        default: appleTrouble = true
        }
        breakers.withLock { breakers in
            var breaker = breakers[environment] ?? CircuitBreaker()
            if appleTrouble { breaker.recordFailure(now: .now) } else { breaker.recordSuccess() }
            breakers[environment] = breaker
        }
        metrics.recordCall(environment: environment, outcome: outcome, duration: .now - started)
        return outcome
    }
}
