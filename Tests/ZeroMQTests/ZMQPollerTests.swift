import Foundation
import Testing

@testable import ZeroMQ

@Suite struct ZMQPollerTests {
    let context = ZMQContext()

    @Test func idlePollTimesOutWithNothingReady() throws {
        let socket = try ZMQSocket(context: context, type: .pull)
        try socket.bind("inproc://idle")
        #expect(try socket.events == [])  // takes what binding signalled
        let pipe = try WakeupPipe()
        let started = ContinuousClock.now
        let ready = try ZMQPoller.readable([try socket.signalDescriptor, pipe.readEnd], timeoutMilliseconds: 20)
        #expect(ready == [false, false])
        #expect(ContinuousClock.now - started >= .milliseconds(10))
    }

    /// What socket loops rely on: a message arriving signals the socket's
    /// descriptor once its events were read, and the pipe signals a wake-up.
    @Test func anArrivingMessageAndAWakeUpAreReported() throws {
        let pull = try ZMQSocket(context: context, type: .pull)
        try pull.bind("inproc://ready")
        let push = try ZMQSocket(context: context, type: .push)
        try push.connect("inproc://ready")
        #expect(try pull.events == [])
        let signal = try pull.signalDescriptor
        #expect(try ZMQPoller.readable([signal], timeoutMilliseconds: 0) == [false])
        #expect(try push.send([bytes("x")]))
        #expect(try ZMQPoller.readable([signal], timeoutMilliseconds: 5_000) == [true])
        #expect(try pull.events == [.readable])
        let pipe = try WakeupPipe()
        pipe.wake()
        #expect(try ZMQPoller.readable([pipe.readEnd], timeoutMilliseconds: 5_000) == [true])
        pipe.drain()
        #expect(try ZMQPoller.readable([pipe.readEnd], timeoutMilliseconds: 0) == [false])
    }

    @Test func aClosedSocketHasNoSignalDescriptor() throws {
        let socket = try ZMQSocket(context: context, type: .pull)
        socket.close()
        #expect(throws: ZMQError.self) { try socket.signalDescriptor }
    }
}
