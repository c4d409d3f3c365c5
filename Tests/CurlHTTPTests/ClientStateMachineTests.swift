@testable import CurlHTTP
import Testing

/// The shared state without threads, curl or a clock: waiters are plain strings.
@Suite struct ClientStateMachineTests {
    typealias Machine = ClientStateMachine<String>

    private func queued(_ id: UInt64) -> QueuedRequest {
        QueuedRequest(id: id, request: HTTPRequest(method: .get, url: "http://127.0.0.1/"), enqueuedAt: .now)
    }

    @Test func requestsBeforeStartWaitAndAreTakenInOrder() {
        var machine = Machine()
        let first = machine.register()
        let second = machine.register()
        guard case .none = machine.enqueue(queued(first), continuation: "a") else { Issue.record("woke a loop not running"); return }
        guard case .none = machine.enqueue(queued(second), continuation: "b") else { Issue.record("woke a loop not running"); return }
        machine.start()
        let work = machine.takeWork(freeSlots: 1)
        #expect(work.started.map(\.id) == [first])
        #expect(machine.takeWork(freeSlots: 5).started.map(\.id) == [second])
        #expect(machine.complete(id: first) == "a")
        #expect(machine.complete(id: first) == nil)
    }

    @Test func onlyOneWakeUntilTheLoopTakesWork() {
        var machine = Machine()
        machine.start()
        let ids = (0..<3).map { _ in machine.register() }
        var wakes = 0
        for id in ids {
            if case .wakeLoop = machine.enqueue(queued(id), continuation: "\(id)") { wakes += 1 }
        }
        #expect(wakes == 1)
        _ = machine.takeWork(freeSlots: 10)
        let next = machine.register()
        guard case .wakeLoop = machine.enqueue(queued(next), continuation: "n") else {
            Issue.record("no wake after the loop took work")
            return
        }
    }

    @Test func cancelBeforeEnqueueFailsTheEnqueue() {
        var machine = Machine()
        machine.start()
        let id = machine.register()
        guard case .none = machine.cancel(id: id) else { Issue.record("nothing to resume yet"); return }
        guard case .fail(let waiter, let error) = machine.enqueue(queued(id), continuation: "w") else {
            Issue.record("enqueue after cancel must fail")
            return
        }
        #expect(waiter == "w" && error == .cancelled)
        #expect(machine.takeWork(freeSlots: 10).started.isEmpty)
    }

    @Test func cancelQueuedResumesAtOnceAndIsSkipped() {
        var machine = Machine()
        machine.start()
        let id = machine.register()
        _ = machine.enqueue(queued(id), continuation: "w")
        guard case .fail("w", wakeLoop: false) = machine.cancel(id: id) else { Issue.record("queued cancel"); return }
        let work = machine.takeWork(freeSlots: 10)
        #expect(work.started.isEmpty && work.cancelled.isEmpty)
    }

    @Test func cancelActiveResumesAtOnceAndTellsTheLoop() {
        var machine = Machine()
        machine.start()
        let id = machine.register()
        _ = machine.enqueue(queued(id), continuation: "w")
        _ = machine.takeWork(freeSlots: 10)
        guard case .fail("w", wakeLoop: true) = machine.cancel(id: id) else { Issue.record("active cancel"); return }
        #expect(machine.takeWork(freeSlots: 10).cancelled == [id])
        #expect(machine.complete(id: id) == nil)  // the late result goes nowhere
        guard case .none = machine.cancel(id: id) else { Issue.record("second cancel"); return }
    }

    @Test func stopFailsQueuedAndActiveAndLaterRequests() {
        var machine = Machine()
        machine.start()
        let active = machine.register()
        _ = machine.enqueue(queued(active), continuation: "active")
        _ = machine.takeWork(freeSlots: 1)
        let waiting = machine.register()
        _ = machine.enqueue(queued(waiting), continuation: "waiting")
        let registered = machine.register()
        let firstStop = machine.requestStop()
        let secondStop = machine.requestStop()
        #expect(firstStop && !secondStop)
        #expect(machine.takeWork(freeSlots: 10).stop)
        let failed = machine.finish()
        #expect(Set(failed) == ["active", "waiting"])
        guard case .fail("late", .shutdown) = machine.enqueue(queued(registered), continuation: "late") else {
            Issue.record("a request after the stop must fail")
            return
        }
    }
}
