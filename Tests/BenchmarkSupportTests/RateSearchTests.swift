import BenchmarkSupport
import Testing

@Suite struct RateSearchTests {
    /// Runs the search against a server that keeps up below `keepsUpTo` and misses (`miss`) from there.
    private func search(
        _ rising: [Double], refinements: Int, keepsUpTo limit: Double, miss: RateStepOutcome = .failed
    ) -> RateSearch {
        var search = RateSearch(rising: rising, refinements: refinements)
        for _ in 0..<20 {
            guard let rate = search.next() else { break }
            search.record(offered: rate, rate < limit ? .keptUp : miss)
        }
        return search
    }

    @Test func aServerThatKeepsUpWithEveryRateIsOfferedEachOnce() {
        let done = search([1_000, 1_250, 1_500], refinements: 2, keepsUpTo: 10_000)
        #expect(done.steps.map(\.offered) == [1_000, 1_250, 1_500])
        #expect(done.sustained == SustainedRate(low: 1_500, high: nil))
    }

    @Test func aMissWithNoRateIsHalvedTowardsTheLimit() {
        let done = search([1_000, 1_250, 1_500, 1_750], refinements: 2, keepsUpTo: 1_400)
        // 1,500 fails; half way to 1,250 is 1,375 (offered as 1,380), kept up; then 1,440, failed.
        #expect(done.steps.map(\.offered) == [1_000, 1_250, 1_500, 1_380, 1_440])
        #expect(done.sustained == SustainedRate(low: 1_380, high: 1_440))
    }

    @Test func aBacklogIsHalvedLikeAFailure() {
        let done = search([1_000, 1_250], refinements: 1, keepsUpTo: 1_100, miss: .backlogged)
        #expect(done.steps.map(\.offered) == [1_000, 1_250, 1_130])
        #expect(done.sustained == SustainedRate(low: 1_000, high: 1_130))
    }

    @Test func aRateServedEndsTheSearch() {
        let done = search([1_000, 1_250, 1_500], refinements: 2, keepsUpTo: 1_400, miss: .fellBehind(served: 1_420))
        #expect(done.steps.map(\.offered) == [1_000, 1_250, 1_500])
        #expect(done.sustained == SustainedRate(low: 1_420, high: 1_420))
    }

    @Test func aRateServedWhileHalvingEndsItThere() {
        var search = RateSearch(rising: [1_000, 1_500], refinements: 3)
        for outcome: RateStepOutcome in [.keptUp, .failed, .fellBehind(served: 1_180)] {
            guard let rate = search.next() else { break }
            search.record(offered: rate, outcome)
        }
        #expect(search.steps.map(\.offered) == [1_000, 1_500, 1_250])
        #expect(search.next() == nil)
        #expect(search.sustained == SustainedRate(low: 1_180, high: 1_180))
    }

    @Test func aServerThatAnswersNothingEndsTheSearchWithoutNarrowingIt() {
        var search = RateSearch(rising: [2_500, 2_750, 3_000], refinements: 2)
        for outcome: RateStepOutcome in [.keptUp, .failed, .unanswered, .keptUp] {
            guard let rate = search.next() else { break }
            search.record(offered: rate, outcome)
        }
        // 2,750 failed; the halving at 2,630 found the server gone: no further step, the bracket stays.
        #expect(search.steps.map(\.offered) == [2_500, 2_750, 2_630])
        #expect(search.next() == nil)
        #expect(search.sustained == SustainedRate(low: 2_500, high: 2_750))
    }

    @Test func nothingIsHalvedBelowTheFirstRateOrWhenNarrowOrWithoutRefinements() {
        #expect(search([1_000, 1_250], refinements: 2, keepsUpTo: 500).steps.map(\.offered) == [1_000])
        #expect(search([1_000, 1_080], refinements: 2, keepsUpTo: 1_050).steps.map(\.offered) == [1_000, 1_080])
        #expect(search([1_000, 1_250], refinements: 0, keepsUpTo: 1_100).steps.map(\.offered) == [1_000, 1_250])
    }

    @Test func theBoundsReadHalvingsInTheOrderRun() {
        let steps: [(offered: Double, outcome: RateStepOutcome)] = [
            (1_000, .keptUp), (1_250, .keptUp), (1_500, .failed), (1_380, .keptUp), (1_440, .backlogged),
        ]
        #expect(SustainedRate(steps: steps) == SustainedRate(low: 1_380, high: 1_440))
        // A halving that contradicts what came before is not counted.
        #expect(SustainedRate(steps: [(1_000, .keptUp), (1_500, .failed), (900, .failed)]) == SustainedRate(low: 1_000, high: 1_500))
    }
}
