import Testing

@testable import VerifierPool

/// When the gateway heartbeats its verifiers, without a clock.
@Suite struct HeartbeatScheduleTests {
    let t0 = ContinuousClock.now

    @Test func heartbeatsGoEverySecondWhileAVerifierIsConnectedAndNeverWithNone() {
        var schedule = HeartbeatSchedule(interval: .seconds(1))
        let alone = schedule.due(now: t0, peers: false)
        #expect(!alone)
        #expect(schedule.next == nil, "no verifier: nothing to wake for")
        let first = schedule.peerJoined(now: t0)
        let second = schedule.peerJoined(now: t0)
        #expect(first == t0 + .seconds(1), "the first begins the beat")
        #expect(second == nil, "another joins it")
        let early = schedule.due(now: t0 + .milliseconds(999), peers: true)
        let onTime = schedule.due(now: t0 + .seconds(1), peers: true)
        #expect(!early)
        #expect(onTime)
        #expect(schedule.next == t0 + .seconds(2))
        let lastLeft = schedule.due(now: t0 + .seconds(2), peers: false)
        #expect(!lastLeft, "the last left")
        #expect(schedule.next == nil)
    }
}
