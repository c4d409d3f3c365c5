import ZeroMQTestSupport
import CZeroMQ
import Testing

@testable import ZeroMQ

/// `zmq_disconnect`, on a bare socket and on a running loop's: a DEALER
/// connected to two ROUTERs spreads its messages over both; once one
/// endpoint is disconnected, every later message goes to the other.
@Suite(.timeLimit(.minutes(1))) struct ZMQDisconnectTests {
    let context = ZMQContext()

    /// Two ROUTERs bound on loopback, and their endpoints.
    func twoRouters() throws -> ([ZMQSocket], [String]) {
        let routers = try (0..<2).map { _ in try ZMQSocket(context: context, type: .router) }
        for router in routers { try router.bind("tcp://127.0.0.1:*") }
        return (routers, try routers.map { try $0.lastEndpoint() })
    }

    /// The router (0 or 1) that the next message reached, within a bounded wait.
    func nextDestination(_ routers: [ZMQSocket]) async throws -> Int? {
        for _ in 0..<10_000 {
            for (index, router) in routers.enumerated() where try router.receive(dontWait: true) != nil {
                return index
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        return nil
    }

    /// Sends probes one at a time until both routers got one: both connections are up.
    /// `send` returns false while the message could not be queued yet.
    func waitUntilBothReached(_ routers: [ZMQSocket], send: () async throws -> Bool) async throws -> Bool {
        var reached: Set<Int> = []
        for _ in 0..<1_000 where reached.count < 2 {
            guard try await send() else {
                try await Task.sleep(for: .milliseconds(1))
                continue
            }
            if let index = try await nextDestination(routers) { reached.insert(index) }
        }
        return reached.count == 2
    }

    /// Sends 20 messages and returns where each one arrived.
    func destinationsOfTwenty(_ routers: [ZMQSocket], send: (Int) async throws -> Void) async throws -> [Int?] {
        var destinations: [Int?] = []
        for index in 0..<20 {
            try await send(index)
            destinations.append(try await nextDestination(routers))
        }
        return destinations
    }

    @Test func aDisconnectedEndpointGetsNoMoreMessages() async throws {
        let (routers, endpoints) = try twoRouters()
        let dealer = try ZMQSocket(context: context, type: .dealer)
        // Not ZMQ_IMMEDIATE: with it, a connection's queue comes with its handshake and
        // disconnecting it takes effect a moment later, in libzmq's I/O thread; without it, the
        // queue is dropped within zmq_disconnect itself, so the very next message goes elsewhere.
        for endpoint in endpoints { try dealer.connect(endpoint) }
        #expect(try await waitUntilBothReached(routers) { try dealer.send([bytes("probe")], dontWait: true) })

        try dealer.disconnect(endpoints[0])
        let destinations = try await destinationsOfTwenty(routers) { index in
            let sent = try dealer.send([frame(index)])
            #expect(sent)
        }
        #expect(destinations == Array(repeating: 1, count: 20))
        // Only a connected endpoint can be disconnected.
        #expect(throws: ZMQError(code: ENOENT, operation: "zmq_disconnect", endpoint: endpoints[0])) {
            try dealer.disconnect(endpoints[0])
        }
    }

    @Test func aRunningLoopDisconnectsOneEndpointAndCanDropWhatItQueued() async throws {
        let (routers, endpoints) = try twoRouters()
        let loop = ZMQSocketLoop(context: context, type: .dealer) { socket in
            for endpoint in endpoints { try socket.connect(endpoint) }
        }
        // Not serving a socket yet.
        #expect(throws: ZMQSocketLoop.Closed()) { try loop.disconnect(endpoints[0]) }
        try await withRunning([loop]) {
            #expect(try await waitUntilBothReached(routers) {
                try await loop.send([bytes("probe")])
                return true
            })
            try loop.disconnect(endpoints[0], discardingQueued: true)
            let destinations = try await destinationsOfTwenty(routers) { try await loop.send([frame($0)]) }
            #expect(destinations == Array(repeating: 1, count: 20))
            // Dropping what is queued means a linger of 0 from now on.
            #expect(loop.locked.withLock { try? $0.socket?.socket.linger() } == 0)
            #expect(throws: ZMQError(code: ENOENT, operation: "zmq_disconnect", endpoint: endpoints[0])) {
                try loop.disconnect(endpoints[0])
            }
        }
    }
}
