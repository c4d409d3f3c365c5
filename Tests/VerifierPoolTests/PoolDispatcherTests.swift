import Testing

@testable import VerifierPool

@Suite struct PoolDispatcherTests {
    let t0 = ContinuousClock.now
    let a: [UInt8] = [1]
    let b: [UInt8] = [2]

    @Test func requestsGoToTheWorkerWithTheMostFreeCredits() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(a, capacity: 1, now: t0)
        _ = dispatcher.ready(b, capacity: 3, now: t0)
        let sent = (1...4).flatMap { dispatcher.submit(UInt64($0), deadline: t0 + .seconds(30), now: t0) }
        // b has the most credits twice; then a and b have one each, and a was given none yet.
        #expect(sent.map(\.worker) == [b, b, a, b])
        // No credit left: the fifth waits.
        #expect(dispatcher.submit(5, deadline: t0 + .seconds(30), now: t0).isEmpty)
        #expect(dispatcher.queuedCount == 1)
        // A reply returns a credit, and the queued request goes out.
        let (deliver, next) = dispatcher.replied(1, from: sent[0].worker, now: t0)
        #expect(deliver)
        #expect(next.map(\.request) == [5])
    }

    @Test func tiesGoToTheWorkerGivenWorkLeastRecentlyThenTheLowestIdentity() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(b, capacity: 2, now: t0)
        _ = dispatcher.ready(a, capacity: 2, now: t0)
        let sent = (1...4).flatMap { dispatcher.submit(UInt64($0), deadline: t0 + .seconds(30), now: t0) }
        #expect(sent.map(\.worker) == [a, b, a, b])
    }

    @Test func aDeadWorkersRequestsGoToAnotherAndALateReplyIsDropped() {
        var dispatcher = PoolDispatcher(deadAfter: .seconds(3))
        _ = dispatcher.ready(a, capacity: 2, now: t0)
        _ = dispatcher.submit(1, deadline: t0 + .seconds(30), now: t0)
        _ = dispatcher.submit(2, deadline: t0 + .seconds(30), now: t0)
        _ = dispatcher.ready(b, capacity: 2, now: t0 + .seconds(3))
        let tick = dispatcher.tick(now: t0 + .seconds(4))
        #expect(tick.dead == [a])
        #expect(Set(tick.dispatches.map(\.request)) == [1, 2])
        #expect(tick.dispatches.allSatisfy { $0.worker == b })
        #expect(dispatcher.redispatched == 2)
        #expect(dispatcher.replied(1, from: b, now: t0 + .seconds(5)).deliver)
        #expect(!dispatcher.replied(1, from: a, now: t0 + .seconds(5)).deliver)
    }

    @Test func queuedAndOverdueRequestsExpire() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(a, capacity: 1, now: t0)
        _ = dispatcher.submit(1, deadline: t0 + .seconds(2), now: t0)
        _ = dispatcher.submit(2, deadline: t0 + .seconds(2), now: t0)
        _ = dispatcher.heard(from: a, now: t0 + .seconds(2))
        #expect(dispatcher.tick(now: t0 + .seconds(2)).expired == [2])
        _ = dispatcher.heard(from: a, now: t0 + .milliseconds(3_500))
        #expect(dispatcher.tick(now: t0 + .milliseconds(3_500)).expired == [1])
        #expect(dispatcher.inFlightCount == 0)
    }

    @Test func theNextDueIsTheEarliestDeadlineGraceOrDeathAndTickFindsItDue() {
        var dispatcher = PoolDispatcher(deadAfter: .seconds(3))
        #expect(dispatcher.nextDue == nil, "nothing to wake for")
        _ = dispatcher.submit(1, deadline: t0 + .seconds(2), now: t0)
        #expect(dispatcher.nextDue == t0 + .seconds(2), "queued: its deadline")
        _ = dispatcher.ready(a, capacity: 1, now: t0)
        // Dispatched: its deadline and grace (3 s), with the worker's death (3 s).
        #expect(dispatcher.nextDue == t0 + .seconds(3))
        _ = dispatcher.heard(from: a, now: t0 + .seconds(1))
        #expect(dispatcher.nextDue == t0 + .seconds(2) + PoolDispatcher.answerGrace)
        #expect(dispatcher.tick(now: t0 + .seconds(3)).expired == [1], "due at that instant")
        #expect(dispatcher.nextDue == t0 + .seconds(4), "the worker's death")
        #expect(dispatcher.tick(now: t0 + .seconds(4)).dead == [a])
        #expect(dispatcher.nextDue == nil)
    }

    @Test func aDrainingWorkerGetsNothingNew() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(a, capacity: 5, now: t0)
        dispatcher.draining(a)
        #expect(dispatcher.submit(1, deadline: t0 + .seconds(30), now: t0).isEmpty)
        #expect(dispatcher.workerCount == 0)
    }

    @Test func aWorkerServesOnlyOnceItAnnouncedAShare() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(a, capacity: 0, share: 0, now: t0)
        #expect(dispatcher.workerCount == 1)
        #expect(dispatcher.servingWorkerCount == 0, "live, but every slot is held by its other pools")
        _ = dispatcher.ready(a, capacity: 3, share: 3, now: t0 + .seconds(1))
        #expect(dispatcher.servingWorkerCount == 1)
        dispatcher.draining(a)
        #expect(dispatcher.servingWorkerCount == 0)
    }

    @Test func aReadyThatCrossedRequestsOnTheWireGrantsNoSlotTwice() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(a, capacity: 4, share: 4, now: t0)
        #expect(submit(1...4, to: &dispatcher).count == 4)
        // The worker's share grows to 6 when it has received one of the four: READY(free 5, share 6).
        // The three still on the wire will take three of its 6, so 2 are free, not 5.
        _ = dispatcher.ready(a, capacity: 5, share: 6, now: t0)
        #expect(submit(5...9, to: &dispatcher).map(\.request) == [5, 6])
        // Each reply frees a slot.
        #expect(dispatcher.replied(1, from: a, now: t0).dispatches.map(\.request) == [7])
    }

    @Test func aReadyWithoutItsShareSetsTheCreditsAsTheFirstReleaseDid() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(a, capacity: 4, now: t0)
        #expect(submit(1...4, to: &dispatcher).count == 4)
        _ = dispatcher.ready(a, capacity: 5, now: t0)
        #expect(submit(5...11, to: &dispatcher).count == 5)
    }

    @Test func overAShrunkenShareRepliesFreeNothingUntilUnderIt() {
        var dispatcher = PoolDispatcher()
        _ = dispatcher.ready(a, capacity: 4, share: 4, now: t0)
        #expect(submit(1...4, to: &dispatcher).count == 4)
        _ = dispatcher.ready(a, capacity: 0, share: 2, now: t0)
        #expect(submit(5...6, to: &dispatcher).isEmpty)
        #expect(dispatcher.replied(1, from: a, now: t0).dispatches.isEmpty)
        #expect(dispatcher.replied(2, from: a, now: t0).dispatches.isEmpty)
        #expect(dispatcher.replied(3, from: a, now: t0).dispatches.map(\.request) == [5])
    }

    @Test func aWorkerNewHereGetsWhatItHasFreeItMayHoldRequestsSentBeforeARestart() {
        var dispatcher = PoolDispatcher()
        // This gateway restarted: the worker still holds 3 requests of the one before, out of 4.
        _ = dispatcher.ready(a, capacity: 1, share: 4, now: t0)
        #expect(submit(1...4, to: &dispatcher).map(\.request) == [1])
    }

    private func submit(_ ids: ClosedRange<UInt64>, to dispatcher: inout PoolDispatcher) -> [PoolDispatcher.Dispatch] {
        ids.flatMap { dispatcher.submit($0, deadline: t0 + .seconds(30), now: t0) }
    }

    @Test func framesRoundTrip() {
        let frames = PoolFrame.encode(.request, [PoolFrame.uint64(42), [9, 9]])
        let decoded = PoolFrame.decode(frames)
        #expect(decoded?.0 == .request)
        #expect(decoded.map { PoolFrame.uint64($0.1[0]) } == 42)
        #expect(PoolFrame.uint32(PoolFrame.uint32(7)) == 7)
        let ready = PoolFrame.decode(PoolFrame.ready(free: 3, share: 5))
        #expect(ready?.0 == .ready)
        #expect(ready?.1.compactMap(PoolFrame.uint32) == [3, 5])
        #expect(PoolFrame.decode([Array("OTHER".utf8), [3]]) == nil)
    }
}
