import Testing

@testable import Verifier

/// How long a verifier gives Apple for a pool request: the envelope's
/// deadline when sooner than its own default, less the time the answer needs
/// to travel back to the gateway.
@Suite struct ReplyBudgetTests {
    let now: Int64 = 1_700_000_000_000
    let allowance = VerifyRequestHandler.replyAllowance

    func budget(deadlineIn milliseconds: Int64?, defaultDeadline: Duration = .seconds(10)) -> Duration {
        VerifyRequestHandler.budget(
            deadlineMs: milliseconds.map { now + $0 } ?? 0, nowMs: now, defaultDeadline: defaultDeadline)
    }

    @Test func theEnvelopesDeadlineLessTheWayBack() {
        #expect(budget(deadlineIn: 4_000) == .milliseconds(4_000) - allowance)
    }

    @Test func theDefaultWhenItIsSoonerOrNoDeadlineIsSet() {
        #expect(budget(deadlineIn: 60_000) == .seconds(10) - allowance)
        #expect(budget(deadlineIn: nil) == .seconds(10) - allowance)
    }

    @Test func aBudgetTooShortToShareIsKeptWhole() {
        #expect(budget(deadlineIn: 400) == .milliseconds(400))
        #expect(budget(deadlineIn: 500) == .milliseconds(500))
        #expect(budget(deadlineIn: 501) == .milliseconds(251))
    }

    @Test func aPassedDeadlineLeavesNothing() {
        #expect(budget(deadlineIn: -5) == .zero)
    }
}
