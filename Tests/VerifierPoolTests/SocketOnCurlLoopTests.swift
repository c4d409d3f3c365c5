import Contracts
import CurlHTTP
import Foundation
import OSThread
import Synchronization
import Testing
@testable import ZeroMQ
import ZeroMQTestSupport

@testable import VerifierPool

/// ZeroMQ socket loops served by the verifier's curl loop (`host:`), as a
/// verifier's pool sockets are: messages are handled on the curl loop's
/// thread and no socket thread of their own exists; back-pressure, stopping
/// and the host's stopping first behave as on a thread of their own; a host
/// that stopped, or stops before it took a loop on, leaves the loop to a
/// thread of its own.
@Suite(.timeLimit(.minutes(1))) struct SocketOnCurlLoopTests {
    let zmq = ZMQContext()

    static var threadName: String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `body` with a curl client's loop running; stops it afterwards.
    func withRunningClient<T: Sendable>(_ body: (CurlHTTPClient) async throws -> T) async throws -> T {
        let client = CurlHTTPClient(logger: quietLogger)
        let running = Task { try await client.run() }
        defer { running.cancel() }
        return try await body(client)
    }

    /// A bound ROUTER the test drives, standing for the far end.
    func router() throws -> (ZMQSocket, String) {
        let router = try ZMQSocket(context: zmq, type: .router)
        try router.setLinger(milliseconds: 0)
        try router.bind("tcp://127.0.0.1:*")
        return (router, try router.lastEndpoint())
    }

    /// A DEALER served by `host`, running, heard by `router`, with a `receive` waiting on it.
    func dealerWaitingToReceive(
        host: any DescriptorHost, router: ZMQSocket, _ endpoint: String
    ) async throws -> (ZMQSocketLoop, Task<Void, any Error>, Task<[[UInt8]], any Error>) {
        let dealer = ZMQSocketLoop(context: zmq, type: .dealer, host: host) { try $0.connect(endpoint) }
        let running = Task { try await dealer.run() }
        try await dealer.send([Array("up".utf8)])
        _ = try await router.receive(within: .seconds(10))
        let waiting = Task { try await dealer.receive() }
        #expect(await eventually { dealer.waitingReceiverCount == 1 })
        return (dealer, running, waiting)
    }

    /// A DEALER named `routingID` for `host`, and the thread its handler last ran on.
    func dealerNotingItsThread(
        routingID: String, host: any DescriptorHost, _ endpoint: String
    ) -> (ZMQSocketLoop, Latest<String>) {
        let dealer = ZMQSocketLoop(context: zmq, type: .dealer, host: host) { socket in
            try socket.setRoutingID(Array(routingID.utf8))
            try socket.connect(endpoint)
        }
        let handledOn = Latest<String>()
        dealer.handleEachMessage { _ in handledOn.set(Self.threadName) }
        return (dealer, handledOn)
    }

    @Test func aHostedDealerHandlesEveryMessageOnTheCurlLoopAndAnswersInOrder() async throws {
        let (router, endpoint) = try router()
        defer { router.close() }
        try await withRunningClient { client in
            let seen = Mutex<(values: [[UInt8]], threads: Set<String>)>(([], []))
            let dealer = ZMQSocketLoop(context: zmq, type: .dealer, host: client) { socket in
                try socket.setRoutingID(Array("hosted".utf8))
                try socket.connect(endpoint)
            }
            // Each message answered from the handler, on the host's thread, as a pool worker's REPLY is.
            dealer.handleEachMessage { message in
                seen.withLock {
                    $0.values.append(message[0])
                    $0.threads.insert(Self.threadName)
                }
                dealer.post(message)
            }
            try await withRunning([dealer]) {
                try await dealer.send([Array("hello".utf8)])
                #expect(try await router.receive(within: .seconds(10)) == [Array("hosted".utf8), Array("hello".utf8)])
                for value in 0..<1_000 { _ = try router.send([Array("hosted".utf8), frame(value)]) }
                var echoed: [[UInt8]] = []
                while echoed.count < 1_000, let message = try await router.receive(within: .seconds(10)) {
                    echoed.append(message[1])
                }
                #expect(echoed == (0..<1_000).map(frame))
            }
            #expect(seen.withLock { $0.values } == (0..<1_000).map(frame))
            #expect(seen.withLock { $0.threads } == ["curl-loop"])
        }
    }

    /// With no transfer and no message, the curl loop waits with no time-out:
    /// idle, its thread never wakes (it woke every second when its wait had a
    /// cap), and a message for its guest still does.
    @Test func anIdleCurlLoopWithAHostedSocketNeverWakesUntilAMessageComes() async throws {
        let (router, endpoint) = try router()
        defer { router.close() }
        try await withRunningClient { client in
            let thread = Latest<ThreadWakeups>()
            let dealer = ZMQSocketLoop(context: zmq, type: .dealer, host: client) { socket in
                thread.set(.current())
                try socket.setRoutingID(Array("idle".utf8))
                try socket.connect(endpoint)
            }
            try await withRunning([dealer]) {
                try await dealer.send([Array("up".utf8)])
                #expect(try await router.receive(within: .seconds(10)) == [Array("idle".utf8), Array("up".utf8)])
                let wakeups = try #require(thread.current, "configured on the curl loop's thread")
                #expect(await wakeups.over(.milliseconds(2_500)) == 0)
                #expect(try router.send([Array("idle".utf8), Array("down".utf8)]))
                #expect(try await dealer.receive() == [Array("down".utf8)])
            }
        }
    }

    @Test func aHostedSendWaitsAtTheHighWaterMarkAndGoesOnceThePeerReads() async throws {
        let puller = try ZMQSocket(context: zmq, type: .pull)
        defer { puller.close() }
        try puller.setLinger(milliseconds: 0)
        try puller.setReceiveHighWaterMark(1)
        try puller.bind("tcp://127.0.0.1:*")
        let endpoint = try puller.lastEndpoint()
        try await withRunningClient { client in
            let pusher = ZMQSocketLoop(context: zmq, type: .push, host: client) { socket in
                try socket.setSendHighWaterMark(1)
                try socket.connect(endpoint)
            }
            try await withRunning([pusher]) {
                // Far more than both queues and the kernel's buffers hold: senders must wait, then all go.
                let payload = [UInt8](repeating: 7, count: 64 * 1_024)
                let sent = Task {
                    for value in 0..<200 { try await pusher.send([frame(value), payload]) }
                }
                #expect(await eventually { pusher.queuedSendCount == 1 }, "a send waits for the peer")
                var received: [[UInt8]] = []
                while received.count < 200, let message = try await puller.receive(within: .seconds(10)) {
                    received.append(message[0])
                }
                try await sent.value
                #expect(received == (0..<200).map(frame), "every message once, in order")
            }
        }
    }

    @Test func stoppingAHostedLoopClosesItsSocketAndLaterCallsThrowClosed() async throws {
        let (router, endpoint) = try router()
        defer { router.close() }
        try await withRunningClient { client in
            let (dealer, running, waiting) = try await dealerWaitingToReceive(host: client, router: router, endpoint)
            dealer.stop()
            try await running.value
            await #expect(throws: ZMQSocketLoop.Closed()) { try await waiting.value }
            await #expect(throws: ZMQSocketLoop.Closed()) { try await dealer.send([Array("late".utf8)]) }
            // The host goes on serving transfers and other guests.
            let another = ZMQSocketLoop(context: zmq, type: .dealer, host: client) { try $0.connect(endpoint) }
            try await withRunning([another]) {
                try await another.send([Array("again".utf8)])
                #expect(try await router.receive(within: .seconds(10))?.last == Array("again".utf8))
            }
        }
    }

    @Test func whenTheHostStopsFirstTheLoopStopsAndItsWaitersHearClosed() async throws {
        let (router, endpoint) = try router()
        defer { router.close() }
        let client = CurlHTTPClient(logger: quietLogger)
        let host = Task { try await client.run() }
        let (_, running, waiting) = try await dealerWaitingToReceive(host: client, router: router, endpoint)
        host.cancel()
        try await host.value
        try await running.value
        await #expect(throws: ZMQSocketLoop.Closed()) { try await waiting.value }
    }

    @Test func aLoopAStoppedHostRefusesRunsOnAThreadOfItsOwn() async throws {
        let (router, endpoint) = try router()
        defer { router.close() }
        let client = CurlHTTPClient(logger: quietLogger)
        let host = Task { try await client.run() }
        host.cancel()
        try await host.value
        let (dealer, handledOn) = dealerNotingItsThread(routingID: "fallback", host: client, endpoint)
        try await withRunning([dealer]) {
            try await dealer.send([Array("up".utf8)])
            #expect(try await router.receive(within: .seconds(10))?.last == Array("up".utf8))
            _ = try router.send([Array("fallback".utf8), Array("down".utf8)])
            #expect(await eventually { handledOn.current != nil })
        }
        #expect(handledOn.current == "zmq-\(ZMQSocketType.dealer)", "its own thread, not the stopped curl loop's")
    }

    @Test func aLoopWhoseHostStopsBeforeTakingItOnRunsOnAThreadOfItsOwn() async throws {
        let (router, endpoint) = try router()
        defer { router.close() }
        let host = HostThatNeverServes()
        let (dealer, handledOn) = dealerNotingItsThread(routingID: "orphan", host: host, endpoint)
        try await withRunning([dealer]) {
            dealer.post([Array("up".utf8)])  // waits in the outbox until someone serves the socket
            try #require(await eventually { host.adoptedCount == 1 })
            host.stop()
            #expect(try await router.receive(within: .seconds(10))?.last == Array("up".utf8))
            _ = try router.send([Array("orphan".utf8), Array("down".utf8)])
            #expect(await eventually { handledOn.current != nil })
        }
        #expect(handledOn.current == "zmq-\(ZMQSocketType.dealer)")
    }

    @Test func aPoolWorkerOnTheCurlLoopServesItsGatewaysRequestsThere() async throws {
        let (router, endpoint) = try router()
        defer { router.close() }
        try await withRunningClient { client in
            let threads = Mutex<Set<String>>([])
            let worker = PoolWorker(
                context: zmq, endpoint: endpoint, capacity: VerifierCapacity(maxInFlight: 8).join(),
                gatewayDeadAfter: .seconds(600), taskExecutor: client.taskExecutor, socketHost: client,
                logger: quietLogger
            ) { request in
                threads.withLock { _ = $0.insert(Self.threadName) }
                return Envelope(requestID: request.requestID, body: .verifyResult(VerifyResult()))
            }
            let running = Task { try await worker.run() }
            defer { running.cancel() }
            let ready = try #require(await next(.ready, on: router))
            for id in 1...20 {
                let envelope = Envelope(requestID: "r\(id)", deadlineMilliseconds: 0, body: .verifyRequest(VerifyRequest()))
                _ = try router.send([ready.worker] + PoolFrame.encode(.request, [PoolFrame.uint64(UInt64(id)), envelope.frame()]))
            }
            var answered: [UInt64: String] = [:]
            for _ in 1...20 {
                let reply = try #require(await next(.reply, on: router))
                let id = try #require(reply.body.first.flatMap(PoolFrame.uint64))
                answered[id] = try Envelope(frame: reply.body[1]).requestID
            }
            #expect(answered == Dictionary(uniqueKeysWithValues: (1...20).map { (UInt64($0), "r\($0)") }))
            #expect(threads.withLock { $0 } == ["curl-loop"])
        }
    }
}

/// A host that takes loops on and never serves them, then stops: as a curl
/// loop whose thread could not start does.
private final class HostThatNeverServes: DescriptorHost, Sendable {
    private let adopted = Mutex<(guests: [any DescriptorGuest], stopped: Bool)>(([], false))

    var adoptedCount: Int { adopted.withLock { $0.guests.count } }

    func adopt(_ guest: any DescriptorGuest) -> Bool {
        adopted.withLock { state in
            guard !state.stopped else { return false }
            state.guests.append(guest)
            return true
        }
    }

    func stop() {
        let guests = adopted.withLock { state in
            state.stopped = true
            return state.guests
        }
        for guest in guests { guest.detach(hostStopping: true) }
    }
}
