import Contracts
import Testing

@testable import LedgerClient

/// The subscriber's rules without sockets or clocks: catch-up, gaps in the
/// live stream, duplicates, quiet spells, and events lost to retention.
@Suite struct EventSubscriptionStateMachineTests {
    static func event(_ seq: UInt64) -> LedgerEvent { LedgerEvent.with { $0.seq = seq } }

    static func batch(_ seqs: [UInt64], oldest: UInt64 = 1, more: Bool = false) -> ReplayBatch {
        ReplayBatch.with {
            $0.events = seqs.map(event)
            $0.oldestRetainedSeq = oldest
            $0.more = more
        }
    }

    @Test func itCatchesUpPageByPageThenFollowsLive() {
        var machine = EventSubscriptionStateMachine(after: 3)
        #expect(machine.start().next == .replay(afterSeq: 3))
        let page = machine.replayed(Self.batch([4, 5], more: true))
        #expect(page.deliver.map(\.seq) == [4, 5])
        #expect(page.next == .replay(afterSeq: 5))
        let end = machine.replayed(Self.batch([6]))
        #expect(end.deliver.map(\.seq) == [6])
        #expect(end.next == .awaitLive)
        let live = machine.live(Self.event(7))
        #expect(live.deliver.map(\.seq) == [7])
    }

    @Test func liveEventsSeenBeforeAreSkipped() {
        var machine = EventSubscriptionStateMachine(after: 0)
        _ = machine.replayed(Self.batch([1, 2]))
        let again = machine.live(Self.event(2))
        #expect(again.deliver.isEmpty)
        #expect(again.next == .awaitLive)
        #expect(machine.last == 2)
    }

    @Test func aGapInTheLiveStreamIsFilledByReplayBeforeGoingOn() {
        var machine = EventSubscriptionStateMachine(after: 0)
        _ = machine.replayed(Self.batch([1]))
        // 2 and 3 were dropped by the PUB socket; 4 shows the gap.
        let gap = machine.live(Self.event(4))
        #expect(gap.deliver.isEmpty)
        #expect(gap.next == .replay(afterSeq: 1))
        // Replay answers 2 and 3 only (4 not yet readable): the held 4 follows them, once.
        let filled = machine.replayed(Self.batch([2, 3]))
        #expect(filled.deliver.map(\.seq) == [2, 3, 4])
        #expect(filled.next == .awaitLive)
        let again = machine.live(Self.event(4))
        #expect(again.deliver.isEmpty)
    }

    @Test func aHeldEventThatReplayBroughtIsNotDeliveredTwice() {
        var machine = EventSubscriptionStateMachine(after: 1)
        _ = machine.live(Self.event(3))
        let filled = machine.replayed(Self.batch([2, 3, 4]))
        #expect(filled.deliver.map(\.seq) == [2, 3, 4])
    }

    @Test func eventsRemovedByRetentionAreReportedAsLost() {
        var machine = EventSubscriptionStateMachine(after: 3)
        let step = machine.replayed(Self.batch([10, 11], oldest: 10))
        #expect(step.deliver.isEmpty)
        #expect(step.next == .fail(.init(afterSeq: 3, oldestRetainedSeq: 10)))
    }

    @Test func eventsLostAfterALiveGap() {
        var machine = EventSubscriptionStateMachine(after: 0)
        _ = machine.replayed(Self.batch([1, 2]))
        let gap = machine.live(Self.event(9))
        #expect(gap.next == .replay(afterSeq: 2))
        let lost = machine.replayed(Self.batch([8, 9], oldest: 8))
        #expect(lost.next == .fail(.init(afterSeq: 2, oldestRetainedSeq: 8)))
    }

    @Test func theNextRetainedEventIsNotALoss() {
        var machine = EventSubscriptionStateMachine(after: 3)
        let page = machine.replayed(Self.batch([4], oldest: 4))
        #expect(page.deliver.map(\.seq) == [4])
    }

    @Test func aQuietSpellAsksReplayAndASilentLedgerIsAskedAgain() {
        var machine = EventSubscriptionStateMachine(after: 0)
        _ = machine.replayed(Self.batch([1]))
        #expect(machine.idle().next == .replay(afterSeq: 1))
        #expect(machine.replayUnanswered().next == .replayAgain(afterSeq: 1, delay: .milliseconds(200)))
    }
}
