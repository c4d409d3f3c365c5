import Testing

@testable import VerifierPool

/// The worker's credits, re-announcements and departure, with the time passed in.
@Suite struct PoolWorkerStateMachineTests {
    let t0 = ContinuousClock.now

    func machine(share: Int = 4) -> PoolWorkerStateMachine {
        PoolWorkerStateMachine(share: share, gatewayDeadAfter: .seconds(3), now: t0)
    }

    @Test func nothingIsAnnouncedWhileRequestsAndRepliesKeepTheShare() {
        var worker = machine()
        for _ in 0..<3 { worker.took(now: t0) }
        #expect(worker.inFlight == 3 && worker.credits == 1)
        #expect(worker.tick(share: 4, now: t0 + .seconds(1)) == nil)
        worker.answered()
        #expect(worker.inFlight == 2 && worker.credits == 2)
        #expect(worker.tick(share: 4, now: t0 + .seconds(2)) == nil)
    }

    @Test func aLargerShareIsAnnouncedAtTheNextTick() {
        var worker = machine()
        worker.took(now: t0)
        #expect(worker.tick(share: 8, now: t0 + .seconds(1)) == 7)
        #expect(worker.credits == 7)
        #expect(worker.tick(share: 8, now: t0 + .seconds(2)) == nil)
    }

    @Test func aReadyThatCouldNotGoIsAnnouncedAgainAtEachTickUntilItGoes() {
        var worker = machine()
        worker.took(now: t0)
        #expect(worker.tick(share: 8, now: t0 + .seconds(1)) == 7)
        worker.announcementFailed()
        // Unchanged share and credits: announced again all the same, with what is free now.
        worker.took(now: t0 + .seconds(1))
        #expect(worker.tick(share: 8, now: t0 + .seconds(2)) == 6)
        worker.announcementFailed()
        worker.heard(now: t0 + .seconds(3))
        #expect(worker.tick(share: 8, now: t0 + .seconds(3)) == 6)
        // It went: nothing more to say.
        worker.heard(now: t0 + .seconds(4))
        #expect(worker.tick(share: 8, now: t0 + .seconds(4)) == nil)
    }

    @Test func aPendingReadyIsReportedWhileTheGatewayIsHeardFrom() {
        var worker = machine()
        #expect(worker.tick(share: 8, now: t0 + .seconds(1)) == 8)
        worker.announcementFailed()
        // The gateway may still use the credits it last learnt of: the split must keep counting them.
        #expect(worker.takeUsage(now: t0 + .seconds(2)).announcementPending)
        // Silent past gatewayDeadAfter, it has dropped this worker's credits too: nothing to count.
        #expect(worker.takeUsage(now: t0 + .milliseconds(3_100)).announcementPending == false)
        worker.heard(now: t0 + .seconds(4))
        #expect(worker.takeUsage(now: t0 + .seconds(4)).announcementPending)
        #expect(worker.tick(share: 8, now: t0 + .seconds(4)) == 8)
        #expect(worker.takeUsage(now: t0 + .seconds(4)).announcementPending == false)
    }

    @Test func aReadyToASilentGatewayThatCouldNotGoIsTriedAgainAtTheNextTick() {
        var worker = machine()
        // Silent past gatewayDeadAfter: told again, but the READY cannot go.
        #expect(worker.tick(share: 4, now: t0 + .milliseconds(3_100)) == 4)
        worker.announcementFailed()
        // Within the same silent period, but pending: tried again until it goes.
        #expect(worker.tick(share: 4, now: t0 + .milliseconds(4_100)) == 4)
        #expect(worker.tick(share: 4, now: t0 + .milliseconds(5_100)) == nil)
    }

    @Test func aSmallerShareTakesBackCreditsAndTheExcessDrainsAsItIsAnswered() {
        var worker = machine(share: 8)
        for _ in 0..<6 { worker.took(now: t0) }
        // Another pool appeared: the share halves while 6 are held.
        #expect(worker.tick(share: 4, now: t0 + .seconds(1)) == 0)
        #expect(worker.credits == 0)
        // A reply gives the gateway a credit back: taken back at the next tick while over the share.
        worker.answered()
        #expect(worker.tick(share: 4, now: t0 + .seconds(2)) == 0)
        // Under sustained load each returned credit is used at once: nothing to take back.
        worker.answered()
        worker.took(now: t0 + .seconds(2))
        #expect(worker.tick(share: 4, now: t0 + .seconds(3)) == nil)
        // Below the share again: the gateway gets what is free.
        for _ in 0..<3 { worker.answered() }
        #expect(worker.inFlight == 2)
        #expect(worker.tick(share: 4, now: t0 + .seconds(4)) == 2)
        #expect(worker.tick(share: 4, now: t0 + .seconds(5)) == nil)
    }

    @Test func theUsageReportedIsThePeakSinceTheLastReportAndWhetherTheCreditsRanOut() {
        var worker = machine(share: 4)
        for _ in 0..<3 { worker.took(now: t0) }
        for _ in 0..<2 { worker.answered() }
        #expect(worker.takeUsage(now: t0) == .init(inFlight: 1, peak: 3, starved: false))
        // The peak starts again from what is held now.
        #expect(worker.takeUsage(now: t0) == .init(inFlight: 1, peak: 1, starved: false))
        // The gateway takes its last credit: starved, even once a reply has given one back.
        for _ in 0..<3 { worker.took(now: t0) }
        worker.answered()
        #expect(worker.credits == 1)
        #expect(worker.takeUsage(now: t0) == .init(inFlight: 3, peak: 4, starved: true))
        #expect(worker.takeUsage(now: t0) == .init(inFlight: 3, peak: 3, starved: false))
    }

    @Test func aRequestBeyondTheKnownCreditsIsAnsweredAndTheCreditsAreResynchronised() {
        var worker = machine(share: 1)
        worker.took(now: t0)
        worker.took(now: t0)  // sent before the gateway saw a smaller READY, say
        #expect(worker.credits == 0)
        worker.answered()
        worker.answered()
        #expect(worker.credits == 2)
        #expect(worker.tick(share: 1, now: t0 + .seconds(1)) == 1)
    }

    @Test func aSilentGatewayIsToldAgainOncePerSilentPeriod() {
        var worker = machine()
        worker.heard(now: t0)
        #expect(worker.tick(share: 4, now: t0 + .seconds(3)) == nil)
        #expect(!worker.gatewayIsSilent(now: t0 + .seconds(3)))
        #expect(worker.gatewayIsSilent(now: t0 + .milliseconds(3_100)))
        #expect(worker.tick(share: 4, now: t0 + .milliseconds(3_100)) == 4)
        #expect(worker.tick(share: 4, now: t0 + .seconds(5)) == nil)
        #expect(worker.tick(share: 4, now: t0 + .milliseconds(6_200)) == 4)
        // Announcing does not make the gateway heard: it is still silent.
        #expect(worker.gatewayIsSilent(now: t0 + .milliseconds(6_200)))
        worker.heard(now: t0 + .seconds(7))
        #expect(worker.tick(share: 4, now: t0 + .seconds(8)) == nil)
    }

    @Test func aLeavingWorkerSaysGoodbyeToALiveGatewayAndAnnouncesNothingMore() {
        var worker = machine()
        worker.took(now: t0)
        #expect(worker.leave(now: t0 + .seconds(1)) == .goodbye)
        #expect(worker.tick(share: 8, now: t0 + .seconds(2)) == nil)
        #expect(worker.tick(share: 8, now: t0 + .seconds(10)) == nil)
        #expect(!worker.isIdle)
        worker.answered()
        #expect(worker.isIdle)
        #expect(worker.credits == 0)
    }

    @Test func aLeavingWorkerWhoseGatewayIsSilentDropsAtOnce() {
        var worker = machine()
        worker.took(now: t0)
        #expect(worker.leave(now: t0 + .milliseconds(3_100)) == .dropAtOnce)
    }
}
