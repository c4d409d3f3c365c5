import Testing

@testable import ZeroMQ

@Suite struct ZMQSocketLoopTests {
    let context = ZMQContext()

    @Test func sendsQueuedBeforeRunGoOutOnceItRuns() async throws {
        let puller = try ZMQSocket(context: context, type: .pull)
        try puller.bind("inproc://queued")
        try puller.setReceiveTimeout(milliseconds: 10_000)
        let pusher = ZMQSocketLoop(context: context, type: .push) { try $0.connect("inproc://queued") }
        let early = Task { try await pusher.send([Array("early".utf8)]) }
        try await Task.sleep(for: .milliseconds(50))
        let runner = Task { try await pusher.run() }
        try await early.value
        #expect(try puller.receive() == [Array("early".utf8)])
        runner.cancel()
        try await runner.value
    }

    @Test func stoppingFailsWaitingReceiversAndLaterSends() async throws {
        let loop = ZMQSocketLoop(context: context, type: .pull) { try $0.bind("inproc://stopping") }
        let runner = Task { try await loop.run() }
        let waiting = Task { try await loop.receive() }
        try await Task.sleep(for: .milliseconds(50))
        runner.cancel()
        try await runner.value
        await #expect(throws: ZMQSocketLoop.Closed.self) { try await waiting.value }
        await #expect(throws: ZMQSocketLoop.Closed.self) { try await loop.send([[1]]) }
        await #expect(throws: ZMQSocketLoop.Closed.self) { try await loop.receive() }
    }

    @Test func aCancelledReceiveLosesNoMessage() async throws {
        let pusher = try ZMQSocket(context: context, type: .push)
        try pusher.bind("inproc://cancel-receive")
        let loop = ZMQSocketLoop(context: context, type: .pull) { try $0.connect("inproc://cancel-receive") }
        let runner = Task { try await loop.run() }
        let cancelled = Task { try await loop.receive() }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        try pusher.send([Array("after".utf8)])
        #expect(try await loop.receive() == [Array("after".utf8)])
        runner.cancel()
        try await runner.value
    }

    @Test func aConfigurationErrorEndsRunWithIt() async throws {
        let loop = ZMQSocketLoop(context: context, type: .router) { try $0.bind("tcp://nowhere") }
        await #expect(throws: ZMQError.self) { try await loop.run() }
    }

    @Test func aFullInboxPushesBackWithoutLosingMessages() async throws {
        let pusher = try ZMQSocket(context: context, type: .push)
        try pusher.bind("inproc://backpressure")
        let loop = ZMQSocketLoop(context: context, type: .pull, inboxLimit: 10) { try $0.connect("inproc://backpressure") }
        let runner = Task { try await loop.run() }
        for index in 0..<1_000 { try pusher.send([[UInt8(index % 256)]]) }
        for index in 0..<1_000 {
            #expect(try await loop.receive() == [[UInt8(index % 256)]])
        }
        runner.cancel()
        try await runner.value
    }
}

@Suite struct ZMQTimedReceiveTests {
    let context = ZMQContext()

    @Test func aTimedReceiveReturnsNilWhenNothingCameAndTheMessageOtherwise() async throws {
        let pusher = try ZMQSocket(context: context, type: .push)
        try pusher.bind("inproc://timed")
        let loop = ZMQSocketLoop(context: context, type: .pull, pollIntervalMilliseconds: 20) {
            try $0.connect("inproc://timed")
        }
        let runner = Task { try await loop.run() }
        #expect(try await loop.receive(timeout: .milliseconds(50)) == nil)
        try pusher.send([Array("late".utf8)])
        #expect(try await loop.receive(timeout: .seconds(30)) == [Array("late".utf8)])
        runner.cancel()
        try await runner.value
    }
}
