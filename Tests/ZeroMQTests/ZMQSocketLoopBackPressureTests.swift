import Foundation
import CZeroMQ
import Testing
import ZeroMQTestSupport

@testable import ZeroMQ

/// Neither direction of a socket loop drops or buffers without bound: full
/// queues make the other side wait.
@Suite(.timeLimit(.minutes(1))) struct ZMQSocketLoopBackPressureTests {
    let context = ZMQContext()

    @Test func aFullInboxStopsReadingSoTheHighWaterMarkPushesBack() async throws {
        let pusher = try ZMQSocket(context: context, type: .push)
        try pusher.setSendHighWaterMark(10)
        try pusher.bind("inproc://inbox")
        let loop = ZMQSocketLoop(context: context, type: .pull, inboxLimit: 10) { socket in
            try socket.setReceiveHighWaterMark(10)
            try socket.connect("inproc://inbox")
        }
        try await withRunning([loop]) {
            // Push until libzmq refuses while the inbox is full: the loop is no longer reading.
            var sent = 0
            for _ in 0..<10_000 {
                if try pusher.send([frame(sent)], dontWait: true) {
                    sent += 1
                } else if loop.bufferedMessageCount == 10 {
                    break
                } else {
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            #expect(loop.bufferedMessageCount == 10)
            #expect(sent < 100, "libzmq queues only up to its high-water marks")
            #expect(try pusher.send([frame(sent)], dontWait: true) == false)
            for index in 0..<sent { #expect(try await loop.receive() == [frame(index)]) }
            #expect(loop.bufferedMessageCount == 0)
        }
    }

    @Test func sendersWaitForThePeerAndACancelledOneIsNeverSent() async throws {
        // A bound PUSH without peers would block: the messages wait in the outbox.
        let loop = ZMQSocketLoop(context: context, type: .push) { try $0.bind("inproc://later") }
        try await withRunning([loop]) {
            let first = Task { try await loop.send([bytes("first")]) }
            #expect(await eventually { loop.queuedSendCount == 1 })
            let second = Task { try await loop.send([bytes("second")]) }
            #expect(await eventually { loop.queuedSendCount == 2 })
            let third = Task { try await loop.send([bytes("third")]) }
            #expect(await eventually { loop.queuedSendCount == 3 })
            second.cancel()
            await #expect(throws: CancellationError.self) { try await second.value }
            #expect(loop.queuedSendCount == 2)

            let puller = try ZMQSocket(context: context, type: .pull)
            try puller.connect("inproc://later")
            try await first.value
            try await third.value
            #expect(try await puller.receive(within: .seconds(10)) == [bytes("first")])
            #expect(try await puller.receive(within: .seconds(10)) == [bytes("third")])
            #expect(try puller.receive(dontWait: true) == nil)
        }
    }

    @Test func aSenderAtTheHighWaterMarkWaitsForPollOut() async throws {
        let router = try ZMQSocket(context: context, type: .router)
        try router.setReceiveHighWaterMark(5)
        try router.bind("inproc://slow-router")
        let dealer = ZMQSocketLoop(context: context, type: .dealer) { socket in
            try socket.setSendHighWaterMark(5)
            try socket.connect("inproc://slow-router")
        }
        let accepted = Counter()
        let count = 200
        try await withRunning([dealer]) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for seq in 0..<count {
                        try await dealer.send([frame(seq)])
                        accepted.increment()
                    }
                }
                // The router does not read yet: the sender gets stuck with one message queued.
                #expect(await eventually { dealer.queuedSendCount == 1 })
                let stuckAt = accepted.value
                #expect(stuckAt < 50, "libzmq queues only up to its high-water marks")
                for seq in 0..<count {
                    let message = try await router.receive(within: .seconds(10))
                    #expect(message?.last == frame(seq))
                }
                try await group.waitForAll()
            }
        }
        #expect(accepted.value == count)
    }

    @Test func trySendTakesWhatLibzmqTakesAtOnceAndQueuesNothing() async throws {
        // A DEALER connected where nobody listens yet queues up to its high-water mark, then would block.
        let path = "\(NSTemporaryDirectory())storekeeper-trysend-\(UInt32.random(in: 0...UInt32.max)).sock"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let endpoint = "ipc://\(path)"
        let dealer = ZMQSocketLoop(context: context, type: .dealer) { socket in
            try socket.setSendHighWaterMark(3)
            try socket.connect(endpoint)
        }
        #expect(try dealer.trySend([bytes("before run")]) == false)
        try await withRunning([dealer]) {
            #expect(await eventually { (try? dealer.trySend([frame(0)])) == true })
            var taken = 1
            while taken < 1_000, try dealer.trySend([frame(taken)]) { taken += 1 }
            #expect(taken == 3, "libzmq takes up to its high-water mark, and trySend nothing more")
            #expect(dealer.queuedSendCount == 0, "nothing waits in the outbox either")
            #expect(throws: ZMQError(code: EINVAL, operation: "zmq_send")) { try dealer.trySend([]) }

            // Once a peer is there, exactly what was taken arrives, in order.
            let router = try ZMQSocket(context: context, type: .router)
            try router.setLinger(milliseconds: 0)
            try router.bind(endpoint)
            for seq in 0..<taken {
                #expect(try await router.receive(within: .seconds(10))?.last == frame(seq))
            }
            #expect(try await router.receive(within: .milliseconds(100)) == nil)
        }
    }

    @Test func aMandatoryRouterFailsTheSenderForAnUnknownPeer() async throws {
        let router = ZMQSocketLoop(context: context, type: .router) { socket in
            try socket.setRouterMandatory(true)
            try socket.bind("inproc://mandatory")
        }
        try await withRunning([router]) {
            await #expect(throws: ZMQError(code: EHOSTUNREACH, operation: "zmq_send")) {
                try await router.send([bytes("nobody"), bytes("hello")])
            }
        }
    }
}
