import Foundation
import Testing

@testable import ZeroMQ

@Suite struct ZMQPollerTests {
    let context = ZMQContext()

    @Test func idlePollTimesOutWithNothingReady() throws {
        let socket = try ZMQSocket(context: context, type: .pull)
        try socket.bind("inproc://idle")
        let pipe = try WakeupPipe()
        let started = ContinuousClock.now
        let ready = try ZMQPoller.poll(
            [.socket(socket, .readable), .fileDescriptor(pipe.readEnd, .readable)], timeoutMilliseconds: 20)
        #expect(ready == [[], []])
        #expect(ContinuousClock.now - started >= .milliseconds(10))
        #expect(try socket.events == [])
    }

    @Test func pollReportsReadableSocketsAndDescriptors() throws {
        let pull = try ZMQSocket(context: context, type: .pull)
        try pull.bind("inproc://ready")
        let push = try ZMQSocket(context: context, type: .push)
        try push.connect("inproc://ready")
        #expect(try push.events == [.writable])
        #expect(try push.send([bytes("x")]))
        let pipe = try WakeupPipe()
        pipe.wake()
        let ready = try ZMQPoller.poll(
            [.socket(pull, [.readable, .writable]), .fileDescriptor(pipe.readEnd, .readable), .socket(push, .writable)],
            timeoutMilliseconds: 5_000)
        #expect(ready == [[.readable], [.readable], [.writable]])
        #expect(try pull.events == [.readable])
        pipe.drain()
        let drained = try ZMQPoller.poll([.fileDescriptor(pipe.readEnd, .readable)], timeoutMilliseconds: 0)
        #expect(drained == [[]])
    }

    @Test func pollingAClosedSocketThrows() throws {
        let socket = try ZMQSocket(context: context, type: .pull)
        socket.close()
        #expect(throws: ZMQError.self) { try ZMQPoller.poll([.socket(socket, .readable)], timeoutMilliseconds: 0) }
    }
}
