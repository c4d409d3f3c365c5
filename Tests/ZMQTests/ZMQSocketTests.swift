import Testing

@testable import ZeroMQ

@Suite struct ZMQSocketTests {
    let context = ZMQContext()

    @Test func inprocPairCarriesMultipartMessagesWithEmptyAndBinaryFrames() throws {
        let a = try ZMQSocket(context: context, type: .pair)
        let b = try ZMQSocket(context: context, type: .pair)
        try a.bind("inproc://pair-test")
        try b.connect("inproc://pair-test")
        let message: [[UInt8]] = [Array("head".utf8), [], [0, 255, 1, 254], Array(repeating: 7, count: 100_000)]
        #expect(try a.send(message))
        try b.setReceiveTimeout(milliseconds: 5_000)
        #expect(try b.receive() == message)
        #expect(try b.receive(dontWait: true) == nil)
    }

    @Test func optionsReadBack() throws {
        let socket = try ZMQSocket(context: context, type: .dealer)
        try socket.setSendHighWaterMark(123)
        try socket.setReceiveHighWaterMark(456)
        try socket.setLinger(milliseconds: 0)
        try socket.setRoutingID(Array("worker-1".utf8))
        try socket.setHeartbeat(intervalMilliseconds: 1_000, timeoutMilliseconds: 3_000, ttlMilliseconds: 3_000)
        try socket.setReconnect(intervalMilliseconds: 100, maximumMilliseconds: 32_000)
        #expect(try socket.sendHighWaterMark() == 123)
        #expect(try socket.receiveHighWaterMark() == 456)
        #expect(try socket.linger() == 0)
        #expect(try socket.routingID() == Array("worker-1".utf8))
        #expect(try socket.heartbeatInterval() == 1_000)
        #expect(try socket.reconnectInterval() == 100)
    }

    @Test func bindingPortZeroReportsTheRealEndpoint() throws {
        let socket = try ZMQSocket(context: context, type: .router)
        try socket.bind("tcp://127.0.0.1:*")
        let endpoint = try socket.lastEndpoint()
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect((Int(endpoint.split(separator: ":").last ?? "") ?? 0) > 0)
    }

    @Test func pollTimesOutWhenIdleAndNonBlockingReceiveReturnsNil() throws {
        let socket = try ZMQSocket(context: context, type: .pull)
        try socket.bind("inproc://idle")
        let ready = try ZMQPoller.poll([.socket(socket, readable: true, writable: false)], timeoutMilliseconds: 10)
        #expect(ready.count == 1)
        #expect(ready[0].readable == false)
        #expect(try socket.receive(dontWait: true) == nil)
    }

    @Test func badEndpointThrowsAnErrorNamingTheCall() throws {
        let socket = try ZMQSocket(context: context, type: .router)
        #expect {
            try socket.bind("tcp://not an endpoint")
        } throws: { error in
            (error as? ZMQError)?.description.hasPrefix("zmq_bind tcp://not an endpoint:") == true
        }
        socket.close()
        #expect(throws: ZMQError.self) { try socket.bind("inproc://closed") }
    }
}
