import CZeroMQ
import Foundation
import Synchronization
import Testing
import ZeroMQTestSupport

@testable import ZeroMQ

@Suite(.timeLimit(.minutes(1))) struct ZMQSocketTests {
    let context = ZMQContext()

    @Test func inprocPairRoundTripsAMultipartMessageWithEmptyAndBinaryFrames() throws {
        let a = try ZMQSocket(context: context, type: .pair)
        let b = try ZMQSocket(context: context, type: .pair)
        try a.bind("inproc://pair")
        try b.connect("inproc://pair")
        let message: [[UInt8]] = [bytes("head"), [], [0, 255, 1, 254, 0], [], Array(repeating: 7, count: 100_000), []]
        #expect(try a.send(message))
        try b.setReceiveTimeout(milliseconds: 5_000)
        #expect(try b.receive() == message)
        #expect(try b.send([[]]))
        #expect(try a.receive(dontWait: false) == [[]])
    }

    @Test func pushPullOverTCPKeepsOrderAndFrames() async throws {
        let pull = try ZMQSocket(context: context, type: .pull)
        try pull.bind("tcp://127.0.0.1:*")
        let push = try ZMQSocket(context: context, type: .push)
        try push.connect(try pull.lastEndpoint())
        for index in 0..<100 { try push.send([frame(index), [], bytes("tail")]) }
        for index in 0..<100 {
            #expect(try await pull.receive(within: .seconds(10)) == [frame(index), [], bytes("tail")])
        }
    }

    @Test func nonBlockingCallsReturnInsteadOfWaiting() throws {
        let pull = try ZMQSocket(context: context, type: .pull)
        try pull.bind("inproc://idle")
        #expect(try pull.receive(dontWait: true) == nil)
        // A bound PUSH without peers has nowhere to queue: sending would block.
        let push = try ZMQSocket(context: context, type: .push)
        try push.bind("inproc://nobody")
        #expect(try push.send([bytes("x")], dontWait: true) == false)
        // A receive time-out also ends in nil.
        try pull.setReceiveTimeout(milliseconds: 1)
        #expect(try pull.receive() == nil)
    }

    @Test func badEndpointsThrowAZMQErrorWithAStableDescription() throws {
        let socket = try ZMQSocket(context: context, type: .router)
        #expect {
            try socket.bind("tcp://not an endpoint")
        } throws: { error in
            guard let error = error as? ZMQError else { return false }
            return error.operation == "zmq_bind" && error.endpoint == "tcp://not an endpoint"
                && error.description == "zmq_bind: \(error.reason)" && !error.reason.isEmpty
        }
        #expect(throws: ZMQError(code: EPROTONOSUPPORT, operation: "zmq_connect", endpoint: "carrier-pigeon://x")) {
            try socket.connect("carrier-pigeon://x")
        }
    }

    @Test func emptyMessagesAndClosedSocketsAreRefused() throws {
        let socket = try ZMQSocket(context: context, type: .push)
        #expect(throws: ZMQError(code: EINVAL, operation: "zmq_send")) { try socket.send([]) }
        #expect(socket.isOpen)
        socket.close()
        socket.close()  // idempotent
        #expect(!socket.isOpen)
        #expect(throws: ZMQError(code: ENOTSOCK, operation: "zmq_bind")) { try socket.bind("inproc://closed") }
        #expect(throws: ZMQError(code: ENOTSOCK, operation: "zmq_msg_recv")) { try socket.receive(dontWait: true) }
    }

    @Test func contextShutdownWakesABlockedReceiveInAnotherThreadWithETERM() async throws {
        let context = ZMQContext()
        let outcome = Box<String>()
        let ready = Box<Bool>()
        let thread = Thread {
            do {
                let socket = try ZMQSocket(context: context, type: .pull)
                defer { socket.close() }
                try socket.bind("inproc://blocked")
                try socket.setReceiveTimeout(milliseconds: 30_000)  // only a safety net
                ready.set(true)
                _ = try socket.receive()
                outcome.set("received")
            } catch {
                outcome.set(error.isTerminated ? "ETERM" : "\(error)")
            }
        }
        thread.start()
        _ = try await ready.wait()
        context.shutdown()
        #expect(try await outcome.wait() == "ETERM")
    }
}

extension Error {
    var isTerminated: Bool { ZMQError.isTerminated(self) }
}
