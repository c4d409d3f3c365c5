import ZeroMQTestSupport
import CallGates
import Contracts
import Testing
import ZeroMQ

@testable import VerifierPool

/// A real `PoolWorker` against a bare ROUTER the test drives: it announces
/// itself again to a gateway gone silent, and a leaving worker says goodbye,
/// then drains what it holds before it stops.
@Suite(.timeLimit(.minutes(1))) struct PoolWorkerTests {
    let zmq = ZMQContext()

    /// The gateway: a ROUTER on a port the system picks.
    func gateway() throws -> (ZMQSocket, String) {
        let router = try ZMQSocket(context: zmq, type: .router)
        try router.setLinger(milliseconds: 0)
        try router.bind("tcp://127.0.0.1:*")
        return (router, try router.lastEndpoint())
    }

    @Test func aWorkerAnnouncesItselfAgainToAGatewayGoneSilent() async throws {
        let (router, endpoint) = try gateway()
        let worker = PoolWorker(
            context: zmq, endpoint: endpoint, capacity: VerifierCapacity(maxInFlight: 8).join(), gatewayDeadAfter: .milliseconds(1_500),
            logger: quietLogger, handler: TestHandler().handle)
        let running = Task { try await worker.run() }
        defer { running.cancel() }
        let first = try #require(await next(.ready, on: router))
        #expect(first.body.first.flatMap(PoolFrame.uint32) == 8)
        // The gateway says nothing: past gatewayDeadAfter the worker tells it again what it offers
        // (a restarted gateway has forgotten it).
        let again = try #require(await next(.ready, on: router))
        #expect(again.worker == first.worker)
        #expect(again.body.first.flatMap(PoolFrame.uint32) == 8)
        #expect(worker.gatewayIsSilent)
    }

    @Test func aWorkerStopsWhenItsSocketStops() async throws {
        let (router, endpoint) = try gateway()
        let workerContext = ZMQContext()
        let worker = PoolWorker(
            context: workerContext, endpoint: endpoint, capacity: VerifierCapacity(maxInFlight: 8).join(),
            gatewayDeadAfter: .seconds(600), logger: quietLogger, handler: TestHandler().handle)
        let running = Task { try await worker.run() }
        _ = try #require(await next(.ready, on: router))
        // What a failed heartbeat does (it stops the socket): the worker must end, not live on unheard.
        workerContext.shutdown()
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = await running.result; return true }
            group.addTask {
                // Bounded: past it the worker is cancelled, so the wait above ends too.
                try? await Task.sleep(for: .seconds(20))
                running.cancel()
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        #expect(ended, "run() ended once its socket stopped")
    }

    @Test func aLeavingWorkerSaysGoodbyeThenServesWhatComesUntilItHoldsNothing() async throws {
        let (router, endpoint) = try gateway()
        let release = CallGate()
        // This gateway never sends a heartbeat: a long silence allowance keeps it live however
        // slowly a loaded machine gets to leave() (past it, a worker drops at once, without goodbye).
        let worker = PoolWorker(
            context: zmq, endpoint: endpoint, capacity: VerifierCapacity(maxInFlight: 8).join(), gatewayDeadAfter: .seconds(600), logger: quietLogger
        ) { request in
            await release.pass()
            return Envelope(requestID: request.requestID, body: .verifyResult(VerifyResult()))
        }
        let running = Task { try await worker.run() }
        defer { running.cancel() }
        let ready = try #require(await next(.ready, on: router))
        let held = Envelope(requestID: "held", deadlineMilliseconds: 0, body: .verifyRequest(VerifyRequest()))
        _ = try router.send([ready.worker] + PoolFrame.encode(.request, [PoolFrame.uint64(1), held.frame()]))
        #expect(await eventually { release.waiting >= 1 })

        worker.leave()
        // A live gateway hears goodbye first; the worker is still serving.
        _ = try #require(await next(.disconnect, on: router))
        // A request the gateway sent before it saw the goodbye, arriving after the second a
        // leaving worker always waits: still taken, since the worker holds one.
        try await Task.sleep(for: .milliseconds(1_500))
        let late = Envelope(requestID: "late", deadlineMilliseconds: 0, body: .verifyRequest(VerifyRequest()))
        _ = try router.send([ready.worker] + PoolFrame.encode(.request, [PoolFrame.uint64(2), late.frame()]))
        #expect(await eventually { release.waiting >= 2 })
        release.open()
        var answered: [UInt64: String] = [:]
        for _ in 0..<2 {
            let reply = try #require(await next(.reply, on: router))
            let id = try #require(reply.body.first.flatMap(PoolFrame.uint64))
            answered[id] = try Envelope(frame: reply.body[1]).requestID
        }
        #expect(answered == [1: "held", 2: "late"])
        // Nothing held any more: the worker stops by itself.
        try await running.value
    }
}
