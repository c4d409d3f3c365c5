import ZeroMQTestSupport
import Contracts
import Testing
import VerifierPool
import ZeroMQ

/// A gateway restarted at the same address, while a verifier still held a
/// request of the previous process: the verifier's late answer to it must not
/// be taken as the answer to a request of the new process.
@Suite("A restarted gateway never takes its previous process's answers")
struct GatewayRestartTests {
    @Test func aLateReplyToThePreviousProcessIsNotDeliveredToANewRequest() async throws {
        let zmq = ZMQContext()
        // The verifier, as a bare DEALER that answers when the test says.
        let worker = try ZMQSocket(context: zmq, type: .dealer)
        try worker.setLinger(milliseconds: 0)

        // The first process binds a port the system picks; the second binds the same one.
        let (staleID, endpoint) = try await requestHeld(by: worker, zmq: zmq, envelope: "before-restart")
        // The verifier connects again once the new process has bound, as libzmq's reconnection
        // would. Left reconnecting meanwhile, every 100 ms to a free port of the ephemeral range,
        // it could connect to itself (TCP's simultaneous open, source port = that port) and take
        // the port from the new process.
        try worker.disconnect(endpoint)
        // The new process, at the same address; the verifier answers the old request first.
        let gateway = VerifierPoolClient(context: zmq, endpoint: endpoint, logger: quietLogger)
        let running = Task { try await gateway.run() }
        defer { running.cancel() }
        #expect(await eventually { gateway.endpoint != nil })
        try worker.connect(endpoint)
        #expect(await eventually { announceReady(on: worker); return gateway.workerCount == 1 })
        async let answer = gateway.verify(request("after-restart", deadline: .seconds(20)))
        let (freshID, _) = try #require(await nextRequest(on: worker))
        _ = try worker.send(PoolFrame.encode(.reply, [PoolFrame.uint64(staleID), reply("answer-to-before-restart")]))
        _ = try worker.send(PoolFrame.encode(.reply, [PoolFrame.uint64(freshID), reply("answer-to-after-restart")]))
        #expect(try await answer.requestID == "answer-to-after-restart")
    }

    /// Runs a gateway process on a port the system picks, connects `worker` to it, has it send one
    /// request to `worker`, and stops it with the request still held: the request's id, and the
    /// endpoint it had bound.
    private func requestHeld(
        by worker: ZMQSocket, zmq: ZMQContext, envelope: String
    ) async throws -> (UInt64, String) {
        let gateway = VerifierPoolClient(context: zmq, endpoint: "tcp://127.0.0.1:*", logger: quietLogger)
        let running = Task { try await gateway.run() }
        #expect(await eventually { gateway.endpoint != nil })
        let endpoint = try #require(gateway.endpoint)
        try worker.connect(endpoint)
        #expect(await eventually { announceReady(on: worker); return gateway.workerCount == 1 })
        let waiting = Task { try await gateway.verify(request(envelope, deadline: .seconds(20))) }
        let (id, _) = try #require(await nextRequest(on: worker))
        running.cancel()
        _ = await waiting.result
        _ = try? await running.value
        return (id, endpoint)
    }

    /// READY, if the DEALER can take it now. Never a blocking send: with no gateway connected yet
    /// (the new process still binding) it would block the test's thread, and on a 2-core machine
    /// that can be the thread the gateway's own task needs to start.
    private func announceReady(on worker: ZMQSocket) {
        _ = try? worker.send(PoolFrame.encode(.ready, [PoolFrame.uint32(4)]), dontWait: true)
    }

    /// The next REQUEST the worker receives: its id and envelope.
    private func nextRequest(on worker: ZMQSocket) async -> (UInt64, Envelope)? {
        for _ in 0..<2_000 {
            if let message = try? worker.receive(dontWait: true), let (command, body) = PoolFrame.decode(message),
                command == .request, body.count == 2, let id = PoolFrame.uint64(body[0]),
                let envelope = try? Envelope(frame: body[1])
            {
                return (id, envelope)
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    private func reply(_ requestID: String) -> [UInt8] {
        Envelope(requestID: requestID, deadlineMilliseconds: 0, body: .verifyRequest(VerifyRequest())).frame()
    }
}
