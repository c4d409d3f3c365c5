import Testing
import Timekeeping

/// The one clock and the one conversion to milliseconds.
@Suite struct TimekeepingTests {
    @Test func durationsBecomeWholeMillisecondsRoundedDownOrUp() {
        #expect(Duration.seconds(2).milliseconds == 2_000)
        #expect(Duration.microseconds(1_999).milliseconds == 1)
        #expect(Duration.microseconds(1_999).millisecondsRoundedUp == 2)
        #expect(Duration.milliseconds(7).millisecondsRoundedUp == 7)
        #expect(Duration.nanoseconds(1).milliseconds == 0)
        #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1)
        #expect(Duration.zero.millisecondsRoundedUp == 0)
    }

    @Test func aSetClockGivesDeadlinesAndWhatIsLeft() {
        let clock = WallClock.fixed(at: 1_700_000_000_000)
        #expect(clock.now() == 1_700_000_000_000)
        #expect(clock.deadline(after: .seconds(5)) == 1_700_000_005_000)
        #expect(clock.remaining(until: 1_700_000_000_250) == .milliseconds(250))
        #expect(clock.remaining(until: 1_699_999_999_000) == .zero, "a passed deadline leaves nothing, never less")
    }

    @Test func theSystemClockReadsMillisecondsSinceTheEpoch() {
        // 2020-01-01 and 2100-01-01: a clock in seconds or microseconds would be far outside.
        #expect((1_577_836_800_000..<4_102_444_800_000).contains(WallClock.system.now()))
    }
}
