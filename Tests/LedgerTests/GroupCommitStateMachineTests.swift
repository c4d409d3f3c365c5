import Testing

@testable import Ledger

/// The group committer's rules without tasks or a store: the batch cap,
/// lanes, overlapping prefetches and stopping.
@Suite struct GroupCommitStateMachineTests {
    typealias Machine = GroupCommitStateMachine<String>

    /// A prefetch about `users` (jobs name users; two overlap when they share one).
    static func prefetch(_ batch: [String]) -> LedgerPrefetch {
        var prefetch = LedgerPrefetch()
        prefetch.users = Set(batch)
        return prefetch
    }

    /// Runs `next()` through a `.prefetch` step, as the committer does.
    static func next(_ machine: inout Machine) -> Machine.RunAction {
        let action = machine.next()
        guard case .prefetch(let batch) = action else { return action }
        return machine.prefetched(batch, prefetch(batch))
    }

    static func committed(_ action: Machine.RunAction) -> (id: Int, batch: [String])? {
        guard case .commit(let id, let batch, _) = action else { return nil }
        return (id, batch)
    }

    @Test func aBatchHoldsAtMostTheCapInSubmitOrder() {
        var machine = Machine(lanes: 1, maxBatch: 2)
        for job in ["a", "b", "c", "d", "e"] {
            let queued = machine.submit(job)
            #expect(queued == .queued(wake: false))
        }
        let first = Self.committed(Self.next(&machine))
        #expect(first?.batch == ["a", "b"])
        guard case .awaitCommit = Self.next(&machine) else {
            Issue.record("one lane: wait")
            return
        }
        machine.committed(first!.id)
        let second = Self.committed(Self.next(&machine))?.batch
        #expect(second == ["c", "d"])
    }

    @Test func anIdleLoopIsWokenBySubmitAndStop() {
        var machine = Machine(lanes: 1, maxBatch: 8)
        guard case .awaitWork = machine.next() else {
            Issue.record("unexpected action")
            return
        }
        #expect(machine.waitsForWork)
        let first = machine.submit("a")
        #expect(first == .queued(wake: true))
        #expect(!machine.waitsForWork)
        let another = machine.submit("b")
        #expect(another == .queued(wake: false))
        let group = Self.committed(Self.next(&machine))
        #expect(group?.batch == ["a", "b"])
        machine.committed(group!.id)
        guard case .awaitWork = Self.next(&machine) else {
            Issue.record("unexpected action")
            return
        }
        let woken = machine.stop()
        #expect(woken)
        #expect(!machine.waitsForWork)
    }

    @Test func afterStopSubmitsAreRejectedAndWhatWasQueuedIsStillCommitted() {
        var machine = Machine(lanes: 1, maxBatch: 8)
        _ = machine.submit("a")
        let woken = machine.stop()
        #expect(!woken)
        let late = machine.submit("b")
        #expect(late == .rejected)
        let group = Self.committed(Self.next(&machine))
        #expect(group?.batch == ["a"])
        machine.committed(group!.id)
        guard case .finish = Self.next(&machine) else {
            Issue.record("stopped and empty: finish")
            return
        }
    }

    @Test func twoLanesRunDisjointGroupsAtOnce() {
        var machine = Machine(lanes: 2, maxBatch: 1)
        _ = machine.submit("u1")
        _ = machine.submit("u2")
        _ = machine.submit("u3")
        let first = Self.committed(Self.next(&machine))
        let second = Self.committed(Self.next(&machine))
        #expect(first?.batch == ["u1"])
        #expect(second?.batch == ["u2"])
        #expect(machine.running.count == 2)
        // Both lanes busy: the third waits, and is not even taken from the queue.
        guard case .awaitCommit = Self.next(&machine) else {
            Issue.record("unexpected action")
            return
        }
        #expect(machine.queue.count == 1)
        machine.committed(second!.id)
        let third = Self.committed(Self.next(&machine))?.batch
        #expect(third == ["u3"])
    }

    @Test func aBatchThatOverlapsARunningGroupWaitsForItsCommit() {
        var machine = Machine(lanes: 2, maxBatch: 1)
        _ = machine.submit("u1")
        _ = machine.submit("u1")
        _ = machine.submit("u2")
        let first = Self.committed(Self.next(&machine))
        #expect(first?.batch == ["u1"])
        // The second is about the same user: it waits, though a lane is free.
        guard case .awaitCommit = Self.next(&machine) else {
            Issue.record("overlap: wait")
            return
        }
        guard case .awaitCommit = Self.next(&machine) else {
            Issue.record("still running: wait")
            return
        }
        #expect(machine.queue == ["u2"], "the held batch keeps its place; later work is not taken around it")
        machine.committed(first!.id)
        let second = Self.committed(Self.next(&machine))
        #expect(second?.batch == ["u1"])
        let after = Self.committed(Self.next(&machine))?.batch
        #expect(after == ["u2"])
    }

    @Test func aHeldBatchIsCommittedBeforeFinishing() {
        var machine = Machine(lanes: 2, maxBatch: 1)
        _ = machine.submit("u1")
        _ = machine.submit("u1")
        let first = Self.committed(Self.next(&machine))
        guard case .awaitCommit = Self.next(&machine) else {
            Issue.record("unexpected action")
            return
        }
        _ = machine.stop()
        machine.committed(first!.id)
        let held = Self.committed(Self.next(&machine))?.batch
        #expect(held == ["u1"])
        guard case .finish = Self.next(&machine) else {
            Issue.record("unexpected action")
            return
        }
    }
}
