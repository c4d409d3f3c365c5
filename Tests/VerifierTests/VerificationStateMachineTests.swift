import AppleFormats
import Contracts
import Testing

@testable import Verifier

@Suite struct VerificationStateMachineTests {
    let start = ContinuousClock.now

    func answer(_ json: String) throws -> VerificationStateMachine.Outcome {
        .answered(try AppleResponse(body: Array(json.utf8)))
    }

    func machine(deadline: Duration = .seconds(30)) -> VerificationStateMachine {
        VerificationStateMachine(start: .unspecified, deadline: start + deadline)
    }

    @Test func productionFirstThenSandboxOn21007WithoutDelay() throws {
        var m = machine()
        guard case .call(.production, let first) = m.begin() else { Issue.record("not production first"); return }
        #expect(first == .zero)
        guard case .call(.sandbox, let delay) = m.handle(try answer(#"{"status":21007}"#), now: start, unit: 0.5) else {
            Issue.record("no sandbox fallback"); return
        }
        #expect(delay == .zero)
        guard case .succeed(.sandbox, let response) = m.handle(try answer(#"{"status":0}"#), now: start, unit: 0.5) else {
            Issue.record("no success"); return
        }
        #expect(response.status == 0)
        #expect(m.fallbacks == 1)
    }

    @Test func sandboxStartGoesToProductionOn21008() throws {
        var m = VerificationStateMachine(start: .sandbox, deadline: start + .seconds(30))
        guard case .call(.sandbox, _) = m.begin() else { Issue.record("not sandbox"); return }
        guard case .call(.production, _) = m.handle(try answer(#"{"status":21008}"#), now: start, unit: 0) else {
            Issue.record("no production fallback"); return
        }
    }

    @Test func environmentSwitchesOnlyOnce() throws {
        var m = machine()
        _ = m.handle(try answer(#"{"status":21007}"#), now: start, unit: 0)
        guard case .fail(.receiptInvalid(21008)) = m.handle(try answer(#"{"status":21008}"#), now: start, unit: 0) else {
            Issue.record("ping-pong between environments"); return
        }
    }

    @Test func malformedIsRetriedOnceInTheSameEnvironmentThenInvalid() throws {
        var m = machine()
        guard case .call(.production, _) = m.handle(try answer(#"{"status":21002}"#), now: start, unit: 0) else {
            Issue.record("21002 not retried"); return
        }
        guard case .fail(.receiptInvalid(21002)) = m.handle(try answer(#"{"status":21002}"#), now: start, unit: 0) else {
            Issue.record("21002 twice not invalid"); return
        }
    }

    @Test(arguments: [21003, 21010])
    func invalidStatusesFailAtOnce(status: Int) throws {
        var m = machine()
        guard case .fail(.receiptInvalid(status)) = m.handle(try answer(#"{"status":\#(status)}"#), now: start, unit: 0)
        else { Issue.record("\(status) not invalid"); return }
    }

    @Test func sharedSecretAndOurBugFailAtOnce() throws {
        var m = machine()
        guard case .fail(.sharedSecretMismatch) = m.handle(try answer(#"{"status":21004}"#), now: start, unit: 0) else {
            Issue.record("21004"); return
        }
    }

    @Test("Defect 2: Apple's 21000 and HTTP 4xx (but 429) fail at once as a request Apple rejected, never retried")
    func aRejectedRequestFailsAtOnce() throws {
        var m = machine()
        guard case .fail(.appleRejectedRequest(21000, nil)) = m.handle(try answer(#"{"status":21000}"#), now: start, unit: 0)
        else { Issue.record("21000"); return }
        for status in [400, 401, 403, 404, 405, 411, 413, 415, 417, 422] {
            var n = machine()
            guard case .fail(.appleRejectedRequest(nil, status)) = n.handle(.httpStatus(status, retryAfter: nil), now: start, unit: 0)
            else { Issue.record("HTTP \(status) retried"); return }
            #expect(n.retryCount == 0)
        }
        var limited = machine()
        guard case .call(.production, let delay) = limited.handle(.httpStatus(429, retryAfter: .seconds(2)), now: start, unit: 0)
        else { Issue.record("429 not retried"); return }
        #expect(delay >= .seconds(2), "Retry-After is honoured")
        let failure = VerifyFailure.appleRejectedRequest(appleStatus: 21000, httpStatus: nil).serviceFailure
        #expect(failure.code == "apple_rejected_request")
        #expect(failure.retryable == false)
        #expect(failure.appleStatus == 21000)
    }

    @Test("Defect 8: a 503 after the 21007 switch reports sandbox's own status, never the stale 21007")
    func aFailureAfterTheSwitchReportsSandboxsStatus() throws {
        var m = machine(deadline: .seconds(1))
        _ = m.handle(try answer(#"{"status":21007}"#), now: start, unit: 0)
        var action = m.handle(.httpStatus(503, retryAfter: nil), now: start, unit: 0)
        var now = start
        for _ in 0..<100 {
            guard case .call(.sandbox, let delay) = action else { break }
            now += delay + .milliseconds(300)
            action = m.handle(.transportFailure, now: now, unit: 0.5)
        }
        guard case .fail(.appleUnavailable(let status, _)) = action else { Issue.record("\(action)"); return }
        #expect(status == nil, "the last attempt was a time-out: no status of Apple's")

        var n = machine(deadline: .seconds(1))
        _ = n.handle(try answer(#"{"status":21007}"#), now: start, unit: 0)
        var sandbox = n.handle(try answer(#"{"status":21005}"#), now: start, unit: 0)
        now = start
        for _ in 0..<100 {
            guard case .call(.sandbox, let delay) = sandbox else { break }
            now += delay + .milliseconds(300)
            sandbox = n.handle(try answer(#"{"status":21005}"#), now: now, unit: 0.5)
        }
        guard case .fail(.appleUnavailable(21005, _)) = sandbox else { Issue.record("\(sandbox)"); return }
    }

    /// The jitter's random number is drawn only for a retry: in the verifier each draw is a system call.
    @Test func onlyARetryDrawsARandomNumber() throws {
        var draws = 0
        func draw() -> Double {
            draws += 1
            return 0.5
        }
        var m = machine()
        _ = m.handle(try answer(#"{"status":21007}"#), now: start, unit: draw())
        _ = m.handle(try answer(#"{"status":0}"#), now: start, unit: draw())
        #expect(draws == 0, "a fallback and a success need no jitter")
        var failing = machine()
        _ = failing.handle(try answer(#"{"status":21003}"#), now: start, unit: draw())
        #expect(draws == 0, "nor does a refusal")
        var retrying = machine()
        guard case .call(.production, let delay) = retrying.handle(.transportFailure, now: start, unit: draw()) else {
            Issue.record("no retry"); return
        }
        #expect(draws == 1)
        #expect(delay > .zero)
    }

    @Test func appleTroubleIsRetriedWithGrowingBackoffUntilTheDeadline() throws {
        var m = machine(deadline: .seconds(10))
        var now = start
        var delays: [Duration] = []
        let troubles: [VerificationStateMachine.Outcome] = [
            try answer(#"{"status":21005}"#), .httpStatus(503, retryAfter: nil), .transportFailure,
            try answer(#"{"status":21150,"is-retryable":true}"#), .unreadable, try answer(#"{"status":21009}"#),
        ]
        var final: VerifyFailure?
        for index in 0..<50 {
            switch m.handle(troubles[index % troubles.count], now: now, unit: 0.999) {
            case .call(.production, let delay):
                delays.append(delay)
                now += delay + .seconds(1)  // the attempt itself took a second
            case .fail(let failure):
                final = failure
            default:
                Issue.record("unexpected action")
            }
            if final != nil { break }
        }
        #expect(delays.count >= 3)
        #expect(delays == delays.sorted())
        #expect(now <= start + .seconds(10))
        guard case .appleUnavailable(_, let retryAfter) = final else { Issue.record("not unavailable"); return }
        #expect(retryAfter >= .seconds(1))
    }

    @Test func retryableFlagFalseMeansInvalid() throws {
        var m = machine()
        guard case .fail(.receiptInvalid(21150)) = m.handle(
            try answer(#"{"status":21150,"is_retryable":false}"#), now: start, unit: 0)
        else { Issue.record("not invalid"); return }
    }

    @Test func anOutageEndsAsUnavailableNotInvalid() {
        var m = machine(deadline: .seconds(1))
        var action = m.handle(.transportFailure, now: start, unit: 0)
        var now = start
        for _ in 0..<100 {
            guard case .call(_, let delay) = action else { break }
            now += delay + .milliseconds(300)
            action = m.handle(.httpStatus(500, retryAfter: nil), now: now, unit: 0.5)
        }
        guard case .fail(.appleUnavailable(nil, _)) = action else { Issue.record("\(action)"); return }
    }
}

@Suite struct BackoffTests {
    @Test func growsExponentiallyUpToTheCapWithFullJitter() {
        let backoff = Backoff(base: .milliseconds(100), cap: .seconds(1))
        #expect(backoff.delay(beforeRetry: 1, retryAfter: nil, unit: 1) == .milliseconds(100))
        #expect(backoff.delay(beforeRetry: 2, retryAfter: nil, unit: 1) == .milliseconds(200))
        #expect(backoff.delay(beforeRetry: 4, retryAfter: nil, unit: 1) == .milliseconds(800))
        #expect(backoff.delay(beforeRetry: 9, retryAfter: nil, unit: 1) == .seconds(1))
        #expect(backoff.delay(beforeRetry: 4, retryAfter: nil, unit: 0.5) == .milliseconds(400))
        #expect(backoff.delay(beforeRetry: 4, retryAfter: nil, unit: 0) == .zero)
    }

    @Test func retryAfterIsHonouredButBounded() {
        let backoff = Backoff(base: .milliseconds(100), cap: .seconds(1))
        #expect(backoff.delay(beforeRetry: 1, retryAfter: .seconds(3), unit: 0.5) == .seconds(3))
        #expect(backoff.delay(beforeRetry: 1, retryAfter: .seconds(3_600), unit: 0.5) == .seconds(4))
    }
}

@Suite struct CircuitBreakerTests {
    @Test func opensAfterThresholdFailuresThenProbesOnce() {
        var breaker = CircuitBreaker(threshold: 3, cooldown: .seconds(2))
        let t0 = ContinuousClock.now
        for _ in 0..<2 { breaker.recordFailure(now: t0) }
        var decisions = [breaker.allowCall(now: t0)]
        breaker.recordFailure(now: t0)
        decisions.append(breaker.allowCall(now: t0))
        #expect(breaker.retryAfter(now: t0) == .seconds(2))
        decisions.append(breaker.allowCall(now: t0 + .seconds(1)))
        decisions.append(breaker.allowCall(now: t0 + .seconds(2)))  // the probe
        decisions.append(breaker.allowCall(now: t0 + .seconds(2)))  // only one
        breaker.recordFailure(now: t0 + .seconds(3))
        decisions.append(breaker.allowCall(now: t0 + .seconds(4)))
        decisions.append(breaker.allowCall(now: t0 + .seconds(5)))
        breaker.recordSuccess()
        decisions.append(breaker.allowCall(now: t0 + .seconds(5)))
        #expect(decisions == [true, false, false, true, false, false, true, true])
        #expect(breaker.state == .closed(consecutiveFailures: 0))
    }

    @Test func aSuccessResetsTheCount() {
        var breaker = CircuitBreaker(threshold: 3, cooldown: .seconds(2))
        let t0 = ContinuousClock.now
        breaker.recordFailure(now: t0)
        breaker.recordFailure(now: t0)
        breaker.recordSuccess()
        breaker.recordFailure(now: t0)
        breaker.recordFailure(now: t0)
        let allowed = breaker.allowCall(now: t0)
        #expect(allowed)
    }
}
