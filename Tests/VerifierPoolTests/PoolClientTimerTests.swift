import ZeroMQTestSupport
import Contracts
import TaskOutcome
import Testing
import ZeroMQ

@testable import VerifierPool

/// The gateway end's timer loop sleeps until the next thing due: with no
/// verifier and no request it never wakes, a request due sooner wakes it,
/// and it heartbeats a verifier only while one is connected.
@Suite(.timeLimit(.minutes(1))) struct PoolClientTimerTests {
    let zmq = ZMQContext()

    func withClient(
        deadAfter: Duration = .seconds(3), _ body: (VerifierPoolClient, String) async throws -> Void
    ) async throws {
        try await withPoolClient(context: zmq, deadAfter: deadAfter, body)
    }

    @Test func anIdleClientsTimerNeverWakes() async throws {
        try await withClient { client, _ in
            // No verifier, no request: once started, the loop sleeps untouched by any timer.
            #expect(await eventually { client.timerWakeups == 1 })
            // A window can only miss a wrong wake-up, never invent one.
            try await Task.sleep(for: .milliseconds(300))
            #expect(client.timerWakeups == 1)
        }
    }

    @Test func aRequestDueSoonerWakesTheTimer() async throws {
        try await withClient { client, _ in
            #expect(await eventually { client.timerWakeups == 1 })
            // Nobody to take it: the loop sleeps until this request's deadline, an hour away...
            let later = Task { try await client.verify(request("later", deadline: .seconds(3_600))) }
            defer { later.cancel() }
            #expect(await eventually { client.timerWakeups == 2 })
            // ...so the second one's must wake it: it fails at its own deadline, not after the hour.
            let sooner = Task { try await client.verify(request("sooner", deadline: .milliseconds(200))) }
            guard let ended = await outcome(of: sooner, within: .seconds(50)) else {
                Issue.record("the request due sooner waited for the later deadline")
                return
            }
            #expect(throws: VerifierPoolClient.Unavailable.self) { try ended.get() }
        }
    }

    @Test func aVerifierIsHeartbeatenWhileConnectedAndTheTimerSleepsOnceItIsGone() async throws {
        try await withClient(deadAfter: .seconds(2)) { client, endpoint in
            let worker = try ZMQSocket(context: zmq, type: .dealer)
            try worker.setLinger(milliseconds: 0)
            try worker.connect(endpoint)
            // The gateway's own beat comes a second after the verifier joins. READY over and over
            // keeps it known however slowly a loaded machine runs the gateway (a heartbeat from a
            // verifier declared dead is ignored; a READY brings it back).
            let heartbeat = await eventually {
                _ = try? worker.send(PoolFrame.encode(.ready, [PoolFrame.uint32(1)]), dontWait: true)
                guard let message = try? worker.receive(dontWait: true) else { return false }
                return PoolFrame.decode(message)?.0 == .heartbeat
            }
            #expect(heartbeat, "a connected verifier hears the gateway's heartbeat")
            // Silent, it is dead after 2 s; with nothing else to do, the loop then sleeps for good.
            #expect(await eventually { client.workerCount == 0 })
            let wakeups = client.timerWakeups
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(client.timerWakeups == wakeups, "no heartbeat to send, nobody to declare dead")
        }
    }
}
