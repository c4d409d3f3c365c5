import CZeroMQ
import Foundation
import Synchronization
import Testing
import ZeroMQTestSupport

@testable import ZeroMQ

@Suite(.timeLimit(.minutes(1))) struct ZMQSocketLoopTests {
    let context = ZMQContext()

    @Test func cancellingRunClosesTheSocketAndLaterCallsThrowClosed() async throws {
        let bound = Box<String>()
        let loop = ZMQSocketLoop(context: context, type: .pull) { socket in
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        let runner = Task { try await loop.run() }
        let endpoint = try await bound.wait()
        let waiting = Task { try await loop.receive() }
        #expect(await eventually { loop.waitingReceiverCount == 1 })
        runner.cancel()
        try await runner.value  // returns: the thread has finished
        await #expect(throws: ZMQSocketLoop.Closed()) { try await waiting.value }
        await #expect(throws: ZMQSocketLoop.Closed()) { try await loop.send([bytes("late")]) }
        await #expect(throws: ZMQSocketLoop.Closed()) { try await loop.receive() }
        await #expect(throws: ZMQSocketLoop.Closed()) { try await loop.run() }
        // The port is free again once libzmq's I/O thread has reaped the socket.
        let again = try ZMQSocket(context: context, type: .pull)
        var rebound = false
        for _ in 0..<2_000 where !rebound {
            do {
                try again.bind(endpoint)
                rebound = true
            } catch {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        #expect(rebound)
    }

    @Test func sendsQueuedBeforeRunGoOutOnceItRuns() async throws {
        let puller = try ZMQSocket(context: context, type: .pull)
        try puller.bind("inproc://queued")
        let pusher = ZMQSocketLoop(context: context, type: .push) { try $0.connect("inproc://queued") }
        let early = Task { try await pusher.send([bytes("early"), []]) }
        #expect(await eventually { pusher.queuedSendCount == 1 })
        try await withRunning([pusher]) {
            try await early.value
            #expect(try await puller.receive(within: .seconds(10)) == [bytes("early"), []])
        }
    }

    @Test func theLoopsThreadCarriesItsOwnNameInProfiles() async throws {
        let bound = Box<String>()
        let loop = ZMQSocketLoop(context: context, type: .rep) { socket in
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        try await withRunning([loop]) {
            _ = try await bound.wait()
            // What perf and /proc show; a name set only on Foundation's Thread never got there.
            let names = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap {
                try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)
            }
            #expect(names.contains("zmq-\(ZMQSocketType.rep)\n"))
        }
    }

    @Test func postedMessagesGoOutInOrderWhetherQueuedBeforeRunOrSentAtOnce() async throws {
        let puller = try ZMQSocket(context: context, type: .pull)
        defer { puller.close() }
        try puller.bind("inproc://posted")
        let pusher = ZMQSocketLoop(context: context, type: .push) { try $0.connect("inproc://posted") }
        for value in 0..<100 { pusher.post([frame(value)]) }
        #expect(pusher.queuedSendCount == 100, "before run, posts wait in the outbox")
        try await withRunning([pusher]) {
            // Posted while the thread may still be flushing the outbox: these must queue behind it.
            for value in 100..<1_000 { pusher.post([frame(value)]) }
            var received: [[UInt8]] = []
            while received.count < 1_000, let message = try await puller.receive(within: .seconds(10)) {
                received.append(message[0])
            }
            #expect(received == (0..<1_000).map(frame), "every message once, in the order posted")
        }
    }

    @Test func aPostLibzmqRefusesReachesItsFailureHandler() async throws {
        let bound = Box<String>()
        let router = ZMQSocketLoop(context: context, type: .router) { socket in
            try socket.setRouterMandatory(true)
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        let failure = Box<Int32>()
        try await withRunning([router]) {
            _ = try await bound.wait()
            // No peer has that identity: with mandatory routing libzmq refuses it.
            router.post([bytes("nobody"), bytes("hello")]) { failure.set(($0 as? ZMQError)?.code ?? 0) }
            #expect(try await failure.wait() == EHOSTUNREACH)
        }
        let closed = Box<Bool>()
        router.post([bytes("late")]) { closed.set($0 is ZMQSocketLoop.Closed) }
        #expect(try await closed.wait(), "after the loop stopped: Closed")
    }

    @Test func aMessageHandlerTakesEveryMessageOnTheLoopsThreadInOrder() async throws {
        let bound = Box<String>()
        let loop = ZMQSocketLoop(context: context, type: .pull) { socket in
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        let handled = Handled()
        loop.handleEachMessage { message in
            handled.append(message[0], thread: (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        }
        let pusher = try ZMQSocket(context: context, type: .push)
        defer { pusher.close() }
        try pusher.setLinger(milliseconds: 0)
        try await withRunning([loop]) {
            try pusher.connect(try await bound.wait())
            for value in 0..<500 { #expect(try pusher.send([frame(value)])) }
            #expect(await eventually { handled.values.count == 500 })
            #expect(handled.values == (0..<500).map(frame), "every message once, in order")
            #expect(handled.threads == ["zmq-\(ZMQSocketType.pull)\n"], "on the loop's own thread")
            #expect(loop.bufferedMessageCount == 0, "nothing left for receive")
        }
    }

    @Test func stopEndsRunNormally() async throws {
        let loop = ZMQSocketLoop(context: context, type: .pair) { try $0.bind("inproc://stop") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await loop.run() }
            loop.stop()
            try await group.waitForAll()
        }
        await #expect(throws: ZMQSocketLoop.Closed()) { try await loop.receive() }
    }

    /// The thread waits with no time-out: idle, nothing wakes it (it woke
    /// every second when its wait had a cap), and a message still does.
    @Test func anIdleLoopsThreadNeverWakesUntilAMessageComes() async throws {
        let thread = Box<ThreadWakeups>()
        let loop = ZMQSocketLoop(context: context, type: .pull) { socket in
            thread.set(.current())
            try socket.bind("inproc://idle")
        }
        let pusher = try ZMQSocket(context: context, type: .push)
        defer { pusher.close() }
        try pusher.setLinger(milliseconds: 0)
        try await withRunning([loop]) {
            let wakeups = try await thread.wait()
            try pusher.connect("inproc://idle")
            #expect(try pusher.send([bytes("first")]))
            #expect(try await loop.receive() == [bytes("first")])
            #expect(await wakeups.over(.milliseconds(2_500)) == 0)
            #expect(try pusher.send([bytes("second")]))
            #expect(try await loop.receive() == [bytes("second")])
        }
    }

    @Test func contextShutdownEndsRunNormally() async throws {
        let context = ZMQContext()
        let thread = Box<ThreadWakeups>()
        let loop = ZMQSocketLoop(context: context, type: .sub) { socket in
            try socket.connect("inproc://no-publisher-yet")
            thread.set(.current())
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await loop.run() }
            // Once the thread waits with no time-out, only the shutdown's signal can end the wait.
            #expect(try await thread.wait().over(.zero) != nil)
            context.shutdown()
            try await group.waitForAll()
        }
        await #expect(throws: ZMQSocketLoop.Closed()) { try await loop.send([[1]]) }
    }

    @Test func aConfigurationErrorEndsRunWithIt() async throws {
        let loop = ZMQSocketLoop(context: context, type: .router) { try $0.bind("tcp://nowhere") }
        let early = Task { try await loop.send([bytes("never")]) }
        #expect(await eventually { loop.queuedSendCount == 1 })
        await #expect(throws: ZMQError.self) { try await loop.run() }
        await #expect(throws: ZMQSocketLoop.Closed()) { try await early.value }
    }

    @Test func aCancelledReceiveLosesNoMessage() async throws {
        let pusher = try ZMQSocket(context: context, type: .push)
        try pusher.bind("inproc://cancel-receive")
        let loop = ZMQSocketLoop(context: context, type: .pull) { try $0.connect("inproc://cancel-receive") }
        try await withRunning([loop]) {
            let cancelled = Task { try await loop.receive() }
            #expect(await eventually { loop.waitingReceiverCount == 1 })
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            #expect(loop.waitingReceiverCount == 0)
            try pusher.send([bytes("after")])
            let message = try await loop.receive()
            #expect(message == [bytes("after")])
        }
    }

    @Test func receiveWithATimeoutReturnsNilWhenIdleAndLosesNothing() async throws {
        let pusher = try ZMQSocket(context: context, type: .push)
        try pusher.bind("inproc://timeout")
        let loop = ZMQSocketLoop(context: context, type: .pull) { try $0.connect("inproc://timeout") }
        try await withRunning([loop]) {
            for _ in 0..<20 {
                let idle = try await loop.receive(timeout: .milliseconds(2))
                #expect(idle == nil)
            }
            #expect(loop.waitingReceiverCount == 0)
            try pusher.send([bytes("one")])
            let one = try await loop.receive(timeout: .seconds(10))
            #expect(one == [bytes("one")])
            try pusher.send([bytes("two")])
            let two = try await loop.receive(timeout: nil)
            #expect(two == [bytes("two")])
            // Timers firing while messages stream in: every message still arrives, in order.
            for index in 0..<200 { try pusher.send([frame(index)]) }
            var next = 0
            for _ in 0..<100_000 where next < 200 {
                if let message = try await loop.receive(timeout: .microseconds(50)) {
                    #expect(message == [frame(next)])
                    next += 1
                }
            }
            #expect(next == 200)
        }
        await #expect(throws: ZMQSocketLoop.Closed()) { try await loop.receive(timeout: .seconds(1)) }
    }

    @Test func aMessageAlreadyReceivedBeatsAnyTimeout() async throws {
        let pusher = try ZMQSocket(context: context, type: .push)
        try pusher.bind("inproc://buffered")
        let loop = ZMQSocketLoop(context: context, type: .pull) { try $0.connect("inproc://buffered") }
        try await withRunning([loop]) {
            try pusher.send([bytes("waiting")])
            #expect(await eventually { loop.bufferedMessageCount == 1 })
            // A zero time-out races nothing: the buffered message is the answer.
            let message = try await loop.receive(timeout: .zero)
            #expect(message == [bytes("waiting")])
            #expect(loop.bufferedMessageCount == 0)
        }
    }

    @Test func emptyMessagesAreRefusedAtOnce() async throws {
        let loop = ZMQSocketLoop(context: context, type: .push) { _ in }
        await #expect(throws: ZMQError(code: EINVAL, operation: "zmq_send")) { try await loop.send([]) }
        #expect(loop.queuedSendCount == 0)
    }
}

/// What a message handler saw, and on which threads.
private final class Handled: Sendable {
    private let seen = Mutex<(values: [[UInt8]], threads: Set<String>)>(([], []))

    func append(_ value: [UInt8], thread: String) {
        seen.withLock {
            $0.values.append(value)
            $0.threads.insert(thread)
        }
    }

    var values: [[UInt8]] { seen.withLock { $0.values } }
    var threads: Set<String> { seen.withLock { $0.threads } }
}
