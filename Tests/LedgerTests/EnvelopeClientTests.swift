import Contracts
import Logging
import TaskOutcome
import Testing
import Timekeeping
import ZeroMQ

@testable import LedgerClient

/// The ledger client's time-outs, against a ROUTER that never answers: a
/// request ends with `Timeout` at its envelope's deadline (read on the
/// client's clock), at once when that has passed, and when the client stops.
@Suite(.timeLimit(.minutes(1))) struct EnvelopeClientTests {
    static let now: Int64 = 1_700_000_000_000
    let zmq = ZMQContext()

    /// A silent ledger on a port the system picks, and a running client connected to it.
    func withSilentLedger(
        _ body: (ZMQSocket, EnvelopeClient, Task<Void, any Error>) async throws -> Void
    ) async throws {
        let ledger = try ZMQSocket(context: zmq, type: .router)
        try ledger.setLinger(milliseconds: 0)
        try ledger.bind("tcp://127.0.0.1:*")
        let client = EnvelopeClient(
            context: zmq, endpoint: try ledger.lastEndpoint(), clock: .fixed(at: Self.now), logger: Logger(label: "test"))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        try await body(ledger, client, running)
    }

    static func query(deadline: Int64) -> Envelope {
        Envelope(requestID: "q", deadlineMilliseconds: deadline, body: .entitlementsQuery(.with { $0.userID = "u" }))
    }

    @Test func anUnansweredRequestTimesOutAtItsDeadline() async throws {
        try await withSilentLedger { ledger, client, _ in
            let started = ContinuousClock.now
            await #expect(throws: EnvelopeClient.Timeout.self) {
                try await client.request(Self.query(deadline: Self.now + 300))
            }
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            // The envelope's deadline, not the default time-out (10 s): checked on the instant the
            // client computes, so a slow machine cannot make the wait itself look long.
            #expect(client.deadline(of: Self.query(deadline: Self.now + 300)) <= .now + .milliseconds(300))
            // Delivery is libzmq's I/O thread's: a loaded machine may deliver later (bounded).
            var sent = try ledger.receive(dontWait: true)
            for _ in 0..<500 where sent == nil {
                try await Task.sleep(for: .milliseconds(20))
                sent = try ledger.receive(dontWait: true)
            }
            #expect(sent != nil, "the request was sent")
        }
    }

    @Test func aRequestWhoseDeadlinePassedTimesOutWithoutWaiting() async throws {
        try await withSilentLedger { _, client, _ in
            await #expect(throws: EnvelopeClient.Timeout.self) {
                try await client.request(Self.query(deadline: Self.now - 1))
            }
            #expect(client.deadline(of: Self.query(deadline: Self.now - 1)) <= .now, "already passed: no wait")
        }
    }

    @Test func stoppingTheClientEndsEveryWaitWithTimeout() async throws {
        try await withSilentLedger { ledger, client, running in
            let answer = Task { try await client.request(Self.query(deadline: Self.now + 3_600_000)) }
            // Sent, so waiting: stop the client.
            while try ledger.receive(dontWait: true) == nil { try await Task.sleep(for: .milliseconds(5)) }
            running.cancel()
            await #expect(throws: EnvelopeClient.Timeout.self) { try await answer.value }
        }
    }

    @Test func anIdleClientsExpiryLoopNeverWakes() async throws {
        try await withSilentLedger { _, client, _ in
            // Nothing waits: once started, the loop sleeps untouched by any timer.
            try await until { client.expiryWakeups == 1 }
            try await Task.sleep(for: .milliseconds(300))
            #expect(client.expiryWakeups == 1)
        }
    }

    @Test func aRequestDueSoonerWakesTheExpiryLoop() async throws {
        try await withSilentLedger { _, client, _ in
            // The loop sleeps until the first request's deadline, an hour away...
            try await until { client.expiryWakeups == 1 }
            let later = Task { try await client.request(Self.query(deadline: Self.now + 3_600_000)) }
            try await until { client.expiryWakeups == 2 }
            // ...so the second one's must wake it: it times out at its own deadline, not after the hour.
            let sooner = Task { try await client.request(Self.query(deadline: Self.now + 200)) }
            guard let ended = await outcome(of: sooner, within: .seconds(50)) else {
                Issue.record("the request due sooner waited for the later deadline")
                return
            }
            #expect(throws: EnvelopeClient.Timeout.self) { try ended.get() }
            later.cancel()
        }
    }

    /// Waits (bounded) until `condition` holds.
    func until(_ condition: () -> Bool) async throws {
        for _ in 0..<2_000 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
        try #require(condition())
    }
}
