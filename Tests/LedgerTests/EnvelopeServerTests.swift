import Contracts
import Foundation
import LedgerClient
import Logging
import OSThread
import Synchronization
import Testing
import ZeroMQ
import ZeroMQTestSupport

@testable import Ledger

/// The ledger's request server takes each request on its socket's thread
/// and answers through the handler's callback, whichever thread calls it,
/// or runs the work the handler returns; beyond `maxInFlight` unanswered
/// requests it answers `overloaded` at once.
@Suite(.timeLimit(.minutes(1))) struct EnvelopeServerTests {
    /// Requests the handler holds until the test answers them; one whose
    /// id starts with "read" it returns as work that answers it.
    final class HeldRequests: Sendable {
        let held = Mutex<[(Envelope, @Sendable (Envelope) -> Void)]>([])
        let threads = Mutex<Set<String>>([])

        func take(_ envelope: Envelope, reply: @escaping EnvelopeServer.Reply) -> EnvelopeServer.Work? {
            threads.withLock { _ = $0.insert(OSThread.currentName ?? "") }
            if envelope.requestID.hasPrefix("read") {
                return { reply(Self.answer(envelope)) }
            }
            held.withLock { $0.append((envelope, reply)) }
            return nil
        }

        static func answer(_ envelope: Envelope) -> Envelope {
            Envelope(requestID: envelope.requestID, body: .recordOutcome(.with { $0.replayed = true }))
        }

        /// Answers every held request from a thread of its own, echoing its id.
        func answerAll() {
            let requests = held.withLock { held in
                defer { held.removeAll() }
                return held
            }
            Thread.detachNewThread {
                for (envelope, reply) in requests { reply(Self.answer(envelope)) }
            }
        }

        var count: Int { held.withLock { $0.count } }
    }

    static func request(_ id: String) -> [[UInt8]] {
        let envelope = Envelope(requestID: id, body: .entitlementsQuery(.with { $0.userID = "u" }))
        return RequestFrame.encode(correlation: UInt64(id.utf8.count), payload: envelope.frame())
    }

    /// The correlation id and envelope of the next reply the client gets, waiting up to 10 s.
    static func nextReply(_ client: ZMQSocket) async throws -> (UInt64, [UInt8])? {
        try await client.receive(within: .seconds(10)).flatMap { RequestFrame.decode($0) }
    }

    /// The failure a reply's envelope carries, if it is one.
    static func failure(in payload: [UInt8]) throws -> ServiceFailure? {
        guard case .failure(let failure) = try Envelope(frame: payload).body else { return nil }
        return failure
    }

    @Test func aHeldRequestIsAnsweredFromAnyThreadAndOneBeyondTheLimitIsOverloaded() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("envelopes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = "ipc://\(directory.path)/ledger"
        let context = ZMQContext()
        let held = HeldRequests()
        let server = EnvelopeServer(
            context: context, endpoint: endpoint, maxInFlight: 2, logger: Logger(label: "test"), handler: held.take)
        let running = Task { try await server.run() }
        defer { running.cancel() }
        let client = try ZMQSocket(context: context, type: .dealer)
        defer { client.close() }
        try client.setLinger(milliseconds: 0)
        try client.connect(endpoint)

        // A ping (empty envelope) is answered empty, without the handler.
        _ = try client.send(RequestFrame.encode(correlation: 7, payload: []))
        let ping = try #require(try await Self.nextReply(client))
        #expect(ping.0 == 7 && ping.1.isEmpty)

        _ = try client.send(Self.request("a"))
        _ = try client.send(Self.request("bb"))
        _ = try client.send(Self.request("ccc"))
        // The third is beyond maxInFlight: answered at once, retryable, and never handed over.
        let refused = try #require(try await Self.nextReply(client))
        #expect(refused.0 == 3)
        let failure = try #require(try Self.failure(in: refused.1))
        #expect(failure.failureCode == .overloaded)
        #expect(failure.retryable)
        #expect(held.count == 2)
        #expect(held.threads.withLock { $0 } == ["zmq-ROUTER"], "handed over on the socket's thread")

        held.answerAll()
        var answered: [UInt64: String] = [:]
        while answered.count < 2, let (correlation, payload) = try await Self.nextReply(client) {
            answered[correlation] = try Envelope(frame: payload).requestID
        }
        #expect(answered == [1: "a", 2: "bb"])

        // Answered, they no longer count: the next request is handed over.
        _ = try client.send(Self.request("dddd"))
        let deadline = ContinuousClock.now + .seconds(10)
        while held.count == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(held.count == 1)
        held.answerAll()
        #expect(try await Self.nextReply(client)?.0 == 4)

        // Work the handler returns runs in the server's tasks and answers.
        _ = try client.send(Self.request("read-5"))
        let read = try #require(try await Self.nextReply(client))
        #expect(read.0 == 6)
        #expect(try Envelope(frame: read.1).requestID == "read-5")

        // A payload that is no envelope is refused as a bad request.
        _ = try client.send(RequestFrame.encode(correlation: 9, payload: [0xFF, 0xFF, 0xFF]))
        let bad = try #require(try await Self.nextReply(client))
        #expect(bad.0 == 9)
        #expect(try Self.failure(in: bad.1)?.failureCode == .badRequest)
        running.cancel()
        _ = await running.result
    }
}
