import Testing

@testable import ZeroMQ

/// The loop's shared state without threads or libzmq: waiters are plain strings.
@Suite struct SocketLoopStateMachineTests {
    typealias Machine = SocketLoopStateMachine<String, String>

    func send(_ machine: inout Machine, _ name: String, cancelled: Bool = false) -> Machine.SendAction {
        machine.enqueueSend(id: machine.makeID(), frames: [Array(name.utf8)], waiter: name, isCancelled: cancelled)
    }

    @Test func sendsBeforeStartWaitAndWakeUpsAreNotRepeated() {
        var machine = Machine(inboxLimit: 10)
        guard case .none = send(&machine, "early") else { Issue.record("no thread to wake before start"); return }
        let started = machine.start()
        let startedAgain = machine.start()
        #expect(started)
        #expect(!startedAgain, "a loop runs once")
        guard case .wake = send(&machine, "first") else { Issue.record("expected a wake-up"); return }
        guard case .none = send(&machine, "second") else { Issue.record("a wake-up is already pending"); return }
        #expect(machine.beginTurn() == .init(stop: false, hasOutgoing: true, inboxHasRoom: true))
        guard case .wake = send(&machine, "third") else { Issue.record("a new turn needs a new wake-up"); return }
        #expect(machine.queuedSendCount == 4)
        #expect(machine.takeNextSend()?.waiter == "early")
    }

    @Test func directSendsKeepOrderAndWakeTheThreadOnlyForAMessageItMightMiss() {
        var machine = Machine(inboxLimit: 1)
        #expect(!machine.acceptsDirectSend, "no socket before run")
        _ = send(&machine, "early")
        _ = machine.start()
        #expect(!machine.acceptsDirectSend, "an older message waits")
        _ = machine.beginTurn()
        _ = machine.takeNextSend()
        #expect(machine.acceptsDirectSend)
        let quiet = machine.calledSocketDirectly(sent: true, readable: false)
        let signalTaken = machine.calledSocketDirectly(sent: true, readable: true)
        let alreadyWoken = machine.calledSocketDirectly(sent: true, readable: true)
        #expect(!quiet)
        #expect(signalTaken, "the send may have taken the socket's signal")
        #expect(!alreadyWoken, "a wake-up is already pending")
        _ = machine.beginTurn()
        _ = machine.deliver([[1]])
        let inboxFull = machine.calledSocketDirectly(sent: true, readable: true)
        #expect(!inboxFull, "the inbox is full: the thread does not read anyway")
        let failed = machine.calledSocketDirectly(sent: false, readable: true)
        #expect(failed, "after a failed send the thread looks for itself, even with a full inbox")
        _ = machine.requestStop()
        #expect(!machine.acceptsDirectSend)
    }

    @Test func wouldBlockKeepsTheMessageAtTheHead() {
        var machine = Machine(inboxLimit: 10)
        _ = machine.start()
        _ = send(&machine, "a")
        _ = send(&machine, "b")
        let head = machine.takeNextSend()!
        machine.sendWouldBlock(head)
        #expect(machine.queuedSendCount == 2)
        #expect(machine.takeNextSend()?.waiter == "a")
        #expect(machine.takeNextSend()?.waiter == "b")
        #expect(machine.takeNextSend() == nil)
    }

    @Test func cancellingAQueuedSendWithdrawsIt() {
        var machine = Machine(inboxLimit: 10)
        _ = machine.start()
        _ = send(&machine, "a")
        _ = send(&machine, "b")
        #expect(machine.cancelSend(id: 2) == "b")
        #expect(machine.cancelSend(id: 2) == nil, "resumed once")
        #expect(machine.queuedSendCount == 1)
        guard case .fail("c", .cancelled) = send(&machine, "c", cancelled: true) else {
            Issue.record("a cancelled task does not queue")
            return
        }
    }

    @Test func messagesGoToWaitingReceiversInOrderThenToTheInbox() {
        var machine = Machine(inboxLimit: 2)
        _ = machine.start()
        guard case .wait = machine.receive(id: 1, waiter: "r1", isCancelled: false),
            case .wait = machine.receive(id: 2, waiter: "r2", isCancelled: false)
        else { Issue.record("empty inbox: receivers wait"); return }
        #expect(machine.deliver([[1]]) == "r1")
        #expect(machine.cancelReceive(id: 2) == "r2")
        #expect(machine.deliver([[2]]) == nil)
        #expect(!machine.inboxIsFull)
        #expect(machine.deliver([[3]]) == nil)
        #expect(machine.inboxIsFull)
        #expect(machine.beginTurn().inboxHasRoom == false)
        // Taking from a full inbox wakes the thread, which had stopped reading.
        guard case .resume("r3", [[2]], wake: true) = machine.receive(id: 3, waiter: "r3", isCancelled: true) else {
            Issue.record("a waiting message is delivered even to a cancelled task")
            return
        }
        guard case .resume("r4", [[3]], wake: false) = machine.receive(id: 4, waiter: "r4", isCancelled: false) else {
            Issue.record("expected the second message")
            return
        }
        guard case .fail("r5", .cancelled) = machine.receive(id: 5, waiter: "r5", isCancelled: true) else {
            Issue.record("a cancelled task does not wait")
            return
        }
    }

    @Test func stoppingFailsEverythingThatWaitsAndWhatComesLater() {
        var machine = Machine(inboxLimit: 10)
        _ = machine.start()
        _ = send(&machine, "queued")
        _ = machine.receive(id: machine.makeID(), waiter: "waiting", isCancelled: false)
        _ = machine.beginTurn()
        let wake = machine.requestStop()
        let wakeAgain = machine.requestStop()
        #expect(wake)
        #expect(!wakeAgain)
        #expect(machine.beginTurn().stop)
        guard case .fail("late", .closed) = send(&machine, "late") else { Issue.record("stopping: no new sends"); return }
        _ = machine.deliver([[9]])
        let leftovers = machine.finish()
        #expect(leftovers.sends == ["queued"])
        #expect(leftovers.receives == [])  // "waiting" got the delivered message
        #expect(leftovers.discardedMessages == 0)
        #expect(machine.phase == .stopped)
        guard case .fail("after", .closed) = machine.receive(id: machine.makeID(), waiter: "after", isCancelled: false)
        else { Issue.record("stopped: receive fails"); return }
    }

    @Test func finishDiscardsTheInboxAndFailsReceivers() {
        var machine = Machine(inboxLimit: 10)
        _ = machine.start()
        _ = machine.deliver([[1]])
        _ = machine.deliver([[2]])
        var leftovers = machine.finish()
        #expect(leftovers.discardedMessages == 2)
        machine = Machine(inboxLimit: 10)
        _ = machine.receive(id: 1, waiter: "r", isCancelled: false)
        leftovers = machine.finish()
        #expect(leftovers.receives == ["r"])
    }
}
