import Testing

@testable import Gateway

@Suite("Rate limit: a token bucket per API key, or per client address")
struct RateLimiterTests {
    @Test func eachAddressHasItsOwnBudgetWhenKeysAreOff() {
        var buckets = TokenBuckets(perMinute: 2)
        let now = ContinuousClock.now
        #expect(buckets.take(.address("10.0.0.1"), now: now) == nil)
        #expect(buckets.take(.address("10.0.0.1"), now: now) == nil)
        #expect(buckets.take(.address("10.0.0.1"), now: now) == 30, "one token every 30 s at 2 a minute")
        #expect(buckets.take(.address("10.0.0.2"), now: now) == nil, "another client is not throttled by the first")
        #expect(buckets.take(.address("10.0.0.1"), now: now + .seconds(30)) == nil, "refilled")
    }

    @Test func theDefaultNeverThrottlesABusyBackend() {
        var buckets = TokenBuckets(perMinute: 60_000)
        var now = ContinuousClock.now
        // 500 requests a second from one key for a minute.
        for _ in 0..<30_000 {
            #expect(buckets.take(.apiKey(0), now: now) == nil)
            now += .milliseconds(2)
        }
    }

    @Test func idleCallersAreForgottenPastTheSweepSize() {
        var buckets = TokenBuckets(perMinute: 10)
        let start = ContinuousClock.now
        for index in 0...TokenBuckets.sweepAbove { _ = buckets.take(.address("a\(index)"), now: start) }
        #expect(buckets.trackedCallers == TokenBuckets.sweepAbove + 1)
        _ = buckets.take(.address("new"), now: start + .seconds(61))
        #expect(buckets.trackedCallers == 1)
    }

    @Test func callersAllActiveAreSweptOnlyEachTimeTheirNumberDoubles() {
        var buckets = TokenBuckets(perMinute: 10, sweepAbove: 100)
        let start = ContinuousClock.now
        for index in 0..<1_000 { _ = buckets.take(.address("a\(index)"), now: start) }
        // Past 100, 200, 400 and 800 callers: four walks of the table, not one for each new caller.
        #expect(buckets.sweeps == 4)
        #expect(buckets.trackedCallers == 1_000)
        // A minute on, 1,000 new callers: at 1,602 the next sweep drops the 1,000 idle ones.
        for index in 0..<1_000 { _ = buckets.take(.address("b\(index)"), now: start + .seconds(61)) }
        #expect(buckets.sweeps == 5)
        #expect(buckets.trackedCallers == 1_000)
    }
}
