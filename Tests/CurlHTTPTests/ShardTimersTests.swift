import Testing

@testable import CurlHTTP

@Suite struct ShardTimersTests {
    @Test func theEarliestTimerIsWaitedForInWholeMillisecondsRoundedUp() {
        let timers = ShardTimers(shards: 3)
        #expect(timers.millisecondsUntilEarliest(now: 0) == nil, "no timer: no deadline")
        timers.set(0, milliseconds: 40, now: 1_000_000)
        timers.set(2, milliseconds: 7, now: 1_000_000)
        #expect(timers.millisecondsUntilEarliest(now: 1_000_000) == 7)
        #expect(timers.millisecondsUntilEarliest(now: 1_500_000) == 7, "6.5 ms left waits 7")
        #expect(timers.millisecondsUntilEarliest(now: 8_000_000) == 0, "due")
        timers.set(2, milliseconds: -1)
        #expect(timers.millisecondsUntilEarliest(now: 1_000_000) == 40, "a removed timer is not waited for")
    }

    @Test func dueTimersAreTakenOnceAndLaterOnesStay() {
        let timers = ShardTimers(shards: 4)
        timers.set(1, milliseconds: 0, now: 10)
        timers.set(3, milliseconds: 5, now: 10)
        timers.set(0, milliseconds: 1, now: 10)
        #expect(timers.takeDue(now: 1_000_010) == [0, 1])
        #expect(timers.takeDue(now: 1_000_010) == [], "taken once")
        #expect(timers.millisecondsUntilEarliest(now: 1_000_010) == 4)
        #expect(timers.takeDue(now: 5_000_010) == [3])
        #expect(timers.millisecondsUntilEarliest(now: 5_000_010) == nil)
    }
}
