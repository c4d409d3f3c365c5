import AppleFormats
import Contracts
import Testing

@testable import Verifier

/// The decisions of one Server API call, outcome by outcome, with no socket and no clock.
@Suite struct ServerAPICallStateMachineTests {
    let t0 = ContinuousClock.now
    let backoff = Backoff(base: .milliseconds(100), cap: .seconds(1))

    func machine(
        fallback: Bool = true, acceptSandbox: Bool = true, start: AppleEnvironment = .production, deadline: Duration = .seconds(10)
    ) -> ServerAPICallStateMachine {
        ServerAPICallStateMachine(
            start: start, fallsBackToSandbox: fallback, acceptSandbox: acceptSandbox, deadline: t0 + deadline, backoff: backoff)
    }

    @Test func productionsNotFoundMovesToSandboxOnceThenIsNotFound() {
        var machine = machine()
        #expect(machine.begin() == .call(.production, after: .zero))
        #expect(machine.handle(.notFound(.transactionIdNotFound), now: t0, unit: 0.5) == .call(.sandbox, after: .zero))
        #expect(machine.handle(.notFound(.transactionIdNotFound), now: t0, unit: 0.5) == .fail(.notFound(.transactionIdNotFound)))
    }

    @Test func thenSandboxAnswers() {
        var machine = machine()
        _ = machine.handle(.notFound(.originalTransactionIdNotFound), now: t0, unit: 0)
        #expect(machine.handle(.answered([1]), now: t0, unit: 0) == .succeed(.sandbox, [1]))
    }

    @Test func noFallbackForCallsWithoutATransactionOrOtherNotFounds() {
        var noTransaction = machine(fallback: false)
        #expect(noTransaction.handle(.notFound(.transactionIdNotFound), now: t0, unit: 0) == .fail(.notFound(.transactionIdNotFound)))
        var testToken = machine()
        #expect(testToken.handle(.notFound(.testNotificationNotFound), now: t0, unit: 0) == .fail(.notFound(.testNotificationNotFound)))
    }

    @Test func withoutSandboxNeitherFallbackNorASandboxCall() {
        var machine = machine(acceptSandbox: false)
        #expect(machine.handle(.notFound(.transactionIdNotFound), now: t0, unit: 0) == .fail(.notFound(.transactionIdNotFound)))
        #expect(self.machine(acceptSandbox: false, start: .sandbox).begin() == .fail(.sandboxNotAccepted))
    }

    @Test func unauthorizedAndRejectedFailAtOnce() {
        var first = machine()
        #expect(first.handle(.unauthorized, now: t0, unit: 0) == .fail(.unauthorized))
        var second = machine()
        #expect(
            second.handle(.rejected(status: 400, code: .invalidTransactionId, message: nil), now: t0, unit: 0)
                == .fail(.rejected(status: 400, code: .invalidTransactionId, message: nil)))
        #expect(second.retryCount == 0)
    }

    @Test func rateLimitedWaitsForRetryAfterEvenPastTheBackoffsCap() {
        var machine = machine()
        #expect(machine.handle(.rateLimited(retryAfter: .seconds(3)), now: t0, unit: 0.5) == .call(.production, after: .seconds(3)))
        #expect(machine.retryCount == 1)
    }

    @Test func applesTroubleBacksOffAndStaysInItsEnvironment() {
        var machine = machine()
        _ = machine.handle(.notFound(.transactionIdNotFound), now: t0, unit: 0)
        #expect(machine.handle(.unavailable(status: 503, retryAfter: nil), now: t0, unit: 0.5) == .call(.sandbox, after: .milliseconds(50)))
        #expect(machine.handle(.unreadable, now: t0, unit: 0.5) == .call(.sandbox, after: .milliseconds(100)))
        #expect(machine.retryCount == 2)
    }

    /// How a call with a 2 s deadline ends when `first` came at its start and `last` at 1.9 s,
    /// when no retry fits any more.
    func ending(_ first: ServerAPIOutcome, then last: ServerAPIOutcome) -> ServerAPICallStateMachine.Action {
        var machine = machine(deadline: .seconds(2))
        _ = machine.handle(first, now: t0, unit: 0)
        return machine.handle(last, now: t0 + .milliseconds(1_900), unit: 0)
    }

    @Test func aTimeOutAfterA429StillReportsThe429() {
        #expect(
            ending(.rateLimited(retryAfter: .milliseconds(500)), then: .transportFailed(.timedOut))
                == .fail(.unavailable(retryAfter: .seconds(1), httpStatus: 429, transportFailure: .timedOut)))
    }

    @Test func aFailureWithoutAnAnswerSaysWhyTheLastTryHadNone() {
        #expect(
            ending(.transportFailed(.connectFailed), then: .transportFailed(.tlsFailure))
                == .fail(.unavailable(retryAfter: .seconds(1), httpStatus: nil, transportFailure: .tlsFailure)))
        // An answer after it is the last word: a 503 is not a TLS failure.
        #expect(
            ending(.transportFailed(.tlsFailure), then: .unavailable(status: 503, retryAfter: nil))
                == .fail(.unavailable(retryAfter: .seconds(1), httpStatus: 503)))
    }

    @Test func aLastTryCutShortByTheDeadlineKeepsTheCauseAnEarlierTryNamed() {
        #expect(
            ending(.transportFailed(.tlsFailure), then: .transportFailed(.timedOut))
                == .fail(.unavailable(retryAfter: .seconds(1), httpStatus: nil, transportFailure: .tlsFailure)))
        // Time-outs alone are the cause.
        #expect(
            ending(.transportFailed(.timedOut), then: .transportFailed(.timedOut))
                == .fail(.unavailable(retryAfter: .seconds(1), httpStatus: nil, transportFailure: .timedOut)))
    }

    @Test func noRetryThatCannotFinishBeforeTheDeadline() {
        var machine = machine(deadline: .seconds(2))
        let failure = machine.handle(.rateLimited(retryAfter: .seconds(2)), now: t0, unit: 0)
        #expect(failure == .fail(.unavailable(retryAfter: .seconds(2), httpStatus: 429)))
        var late = self.machine(deadline: .seconds(2))
        #expect(
            late.handle(.unavailable(status: 500, retryAfter: nil), now: t0 + .milliseconds(1_900), unit: 0.9)
                == .fail(.unavailable(retryAfter: .seconds(1), httpStatus: 500)))
    }
}
