import CZeroMQ
import Testing

@testable import ZeroMQ

@Suite struct ZMQSocketOptionTests {
    let context = ZMQContext()

    @Test func optionsReadBackWhatWasSet() throws {
        let socket = try ZMQSocket(context: context, type: .dealer)
        try socket.setSendHighWaterMark(123)
        try socket.setReceiveHighWaterMark(456)
        try socket.setLinger(milliseconds: 0)
        try socket.setRoutingID(bytes("worker-1"))
        try socket.setHeartbeat(intervalMilliseconds: 1_000, timeoutMilliseconds: 3_000, ttlMilliseconds: 3_000)
        try socket.setReconnect(intervalMilliseconds: 1_000, maximumMilliseconds: 32_000)
        try socket.setReceiveTimeout(milliseconds: 250)
        try socket.setSendTimeout(milliseconds: 750)
        try socket.setImmediate(true)
        #expect(try socket.sendHighWaterMark() == 123)
        #expect(try socket.receiveHighWaterMark() == 456)
        #expect(try socket.linger() == 0)
        #expect(try socket.routingID() == bytes("worker-1"))
        #expect(try socket.heartbeatInterval() == 1_000)
        #expect(try socket.heartbeatTimeout() == 3_000)
        #expect(try socket.heartbeatTTL() == 3_000)
        #expect(try socket.reconnectInterval() == 1_000)
        #expect(try socket.reconnectIntervalMax() == 32_000)
        #expect(try socket.receiveTimeout() == 250)
        #expect(try socket.sendTimeout() == 750)
        #expect(try socket.isImmediate())
    }

    @Test func newSocketsLingerAFiniteTime() throws {
        let socket = try ZMQSocket(context: context, type: .push)
        #expect(try socket.linger() == ZMQSocket.defaultLingerMilliseconds)
        #expect(try socket.isImmediate() == false)
    }

    @Test func ipv6IsOffUntilSet() throws {
        let socket = try ZMQSocket(context: context, type: .dealer)
        #expect(try socket.isIPv6() == false)
        try socket.setIPv6(true)
        #expect(try socket.isIPv6())
    }

    @Test func writeOnlyAndSubscriptionOptionsAreAccepted() throws {
        let router = try ZMQSocket(context: context, type: .router)
        try router.setRouterMandatory(true)
        let sub = try ZMQSocket(context: context, type: .sub)
        try sub.subscribe("transaction.")
        try sub.subscribe([0, 1])
        try sub.unsubscribe("transaction.")
        try sub.unsubscribe([0, 1])
    }

    @Test func badOptionValuesThrowEINVAL() throws {
        let socket = try ZMQSocket(context: context, type: .dealer)
        #expect(throws: ZMQError(code: EINVAL, operation: "zmq_setsockopt(ZMQ_SNDHWM)")) {
            try socket.setSendHighWaterMark(Int(Int32.max) + 1)
        }
        #expect(throws: ZMQError(code: EINVAL, operation: "zmq_setsockopt(ZMQ_ROUTING_ID)")) {
            try socket.setRoutingID([])
        }
        // Subscriptions belong to SUB sockets.
        #expect(throws: ZMQError.self) { try socket.subscribe("x") }
    }

    @Test func lastEndpointNamesThePortChosenForStar() throws {
        let socket = try ZMQSocket(context: context, type: .router)
        try socket.bind("tcp://127.0.0.1:*")
        let endpoint = try socket.lastEndpoint()
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = try #require(try socket.lastEndpointPort())
        #expect(endpoint == "tcp://127.0.0.1:\(port)")
        // The resolved endpoint is the one to unbind.
        try socket.unbind(endpoint)

        let inproc = try ZMQSocket(context: context, type: .pair)
        try inproc.bind("inproc://named")
        #expect(try inproc.lastEndpoint() == "inproc://named")
        #expect(try inproc.lastEndpointPort() == nil)
    }

    @Test func tcpPortParsing() {
        #expect(ZMQSocket.tcpPort(of: "tcp://127.0.0.1:5555") == 5555)
        #expect(ZMQSocket.tcpPort(of: "tcp://[::1]:41234") == 41234)
        #expect(ZMQSocket.tcpPort(of: "tcp://127.0.0.1:*") == nil)
        #expect(ZMQSocket.tcpPort(of: "tcp://127.0.0.1:70000") == nil)
        #expect(ZMQSocket.tcpPort(of: "ipc:///tmp/x:1") == nil)
        #expect(ZMQSocket.tcpPort(of: "inproc://x") == nil)
    }
}
