import BenchmarkSupport
import Testing

@Suite struct SustainedRateTests {
    @Test func keptUpWithEveryRateGivesOnlyALowerBound() {
        let rate = SustainedRate(steps: [(1_000, .keptUp), (1_500, .keptUp)])
        #expect(rate == SustainedRate(low: 1_500, high: nil))
        #expect(rate.text == "≥ 1500 (kept up with every rate)")
    }

    @Test func fallingBehindGivesTheRateServedThere() {
        let rate = SustainedRate(steps: [(1_000, .keptUp), (1_500, .fellBehind(served: 1_320))])
        #expect(rate == SustainedRate(low: 1_320, high: 1_320))
        #expect(rate.text == "1320")
    }

    @Test func aServedRateBelowOneKeptUpWithCountsAsThatOne() {
        let rate = SustainedRate(steps: [(1_000, .keptUp), (1_250, .fellBehind(served: 980))])
        #expect(rate == SustainedRate(low: 1_000, high: 1_000))
    }

    @Test func failingBoundsItBetweenTheLastKeptUpWithAndTheFailedRate() {
        let rate = SustainedRate(steps: [(1_000, .keptUp), (1_250, .keptUp), (1_500, .failed)])
        #expect(rate == SustainedRate(low: 1_250, high: 1_500))
        #expect(rate.text == "1250-1500")
        #expect(SustainedRate(steps: [(1_000, .failed)]) == SustainedRate(low: 0, high: 1_000))
    }

    @Test func aBacklogFromTheStartBoundsItLikeAFailure() {
        let rate = SustainedRate(steps: [(1_000, .keptUp), (1_500, .backlogged)])
        #expect(rate == SustainedRate(low: 1_000, high: 1_500))
    }

    @Test func stepsAfterTheFirstNotKeptUpWithAreIgnored() {
        let rate = SustainedRate(steps: [(1_000, .failed), (1_250, .keptUp)])
        #expect(rate == SustainedRate(low: 0, high: 1_000))
    }

    @Test func theRatioSpansWhatTheBoundsAllow() {
        let mine = SustainedRate(low: 2_250, high: 2_500)
        #expect(mine.ratioText(over: SustainedRate(low: 1_250, high: 1_250)) == "1.80-2.00")
        #expect(SustainedRate(low: 2_400, high: 2_400).ratioText(over: SustainedRate(low: 1_200, high: 1_200)) == "2.00")
        #expect(SustainedRate(low: 3_000, high: nil).ratioText(over: SustainedRate(low: 1_000, high: 1_500)) == "≥ 2.00")
        #expect(mine.ratioText(over: SustainedRate(low: 1_250, high: nil)) == "≤ 2.00")
        #expect(SustainedRate(low: 3_000, high: nil).ratioText(over: SustainedRate(low: 0, high: nil)) == "?")
    }

    @Test func anOutcomeIsReadFromTheRunsFailuresBacklogAndMedian() {
        var summary = LoadSummary()
        for _ in 0..<99 { summary.add(latency: .seconds(3), outcome: "200") }
        summary.add(latency: .seconds(10), outcome: "transport timeout")
        summary.backlog = Backlog(drift: .milliseconds(100), span: .seconds(8))
        #expect(RateStepOutcome(summary, offered: 2_000, slowest: .seconds(4)) == .keptUp)
        #expect(RateStepOutcome(summary, offered: 2_000, slowest: .milliseconds(2_500)) == .backlogged)
        summary.backlog = Backlog(drift: .seconds(2), span: .seconds(8))
        #expect(RateStepOutcome(summary, offered: 2_000, slowest: .seconds(4)) == .fellBehind(served: 1_600))
        #expect(RateStepOutcome(summary, offered: 2_000, slowest: .milliseconds(2_500)) == .backlogged)
        summary.add(latency: .seconds(10), outcome: "transport timeout")
        #expect(RateStepOutcome(summary, offered: 2_000, slowest: .seconds(4)) == .failed)
        var gone = LoadSummary()
        for _ in 0..<3 { gone.add(latency: .milliseconds(1), outcome: "transport connection refused") }
        #expect(RateStepOutcome(gone, offered: 2_000, slowest: .seconds(4)) == .unanswered)
    }

    @Test func aStepAnsweredByNoOneBoundsItOnlyWhenNothingElseDid() {
        #expect(SustainedRate(steps: [(2_500, .keptUp), (2_750, .unanswered)]) == SustainedRate(low: 2_500, high: 2_750))
        #expect(
            SustainedRate(steps: [(2_500, .keptUp), (2_750, .failed), (2_630, .unanswered)])
                == SustainedRate(low: 2_500, high: 2_750))
    }
}
