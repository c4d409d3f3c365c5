import Contracts
import Logging
import Synchronization
import Testing
import ZeroMQ
import ZeroMQTestSupport

@testable import LedgerClient

/// A ledger that is stopping or at capacity answers replay with a retryable
/// failure; the subscriber asks again, as after a time-out, instead of ending.
@Suite(.timeLimit(.minutes(1))) struct EventSubscriberReplayRetryTests {
    struct Delivered: Error {}

    final class Seen: Sendable {
        let seqs = Mutex<[UInt64]>([])
    }

    @Test func aRetryableFailureFromReplayIsAskedAgainNotThrown() async throws {
        let zmq = ZMQContext()
        let replay = try ZMQSocket(context: zmq, type: .router)
        defer { replay.close() }
        try replay.setLinger(milliseconds: 0)
        try replay.bind("tcp://127.0.0.1:*")
        let events = try ZMQSocket(context: zmq, type: .pub)
        defer { events.close() }
        try events.setLinger(milliseconds: 0)
        try events.bind("tcp://127.0.0.1:*")
        let subscriber = LedgerEventSubscriber(
            context: zmq, eventsEndpoint: try events.lastEndpoint(), replayEndpoint: try replay.lastEndpoint(),
            logger: Logger(label: "test"))
        let delivered = Seen()
        let following = Task {
            try await subscriber.run(after: 0) { event in
                delivered.seqs.withLock { $0.append(event.seq) }
                throw Delivered()
            }
        }
        defer { following.cancel() }

        // The first replay request is refused as overloaded; the second gets seq 1.
        let answers: [Envelope.OneOf_Body] = [
            .failure(ServiceFailure(.overloaded, message: "at capacity", retryable: true)),
            .replayBatch(.with {
                $0.events = [LedgerEvent.with { $0.seq = 1 }]
                $0.headSeq = 1
                $0.oldestRetainedSeq = 1
            }),
        ]
        var requests = 0
        while requests < answers.count, let frames = try await replay.receive(within: .seconds(20)) {
            let request = try #require(RequestFrame.decode(frames.dropFirst()))
            guard case .replayRequest = try Envelope(frame: request.payload).body else { continue }
            let answer = Envelope(requestID: "replay", body: answers[requests])
            _ = try replay.send([frames[0]] + RequestFrame.encode(correlation: request.correlation, payload: answer.frame()))
            requests += 1
        }
        #expect(requests == 2, "asked again after the refusal")
        await #expect(throws: Delivered.self) { try await following.value }
        #expect(delivered.seqs.withLock { $0 } == [1])
    }
}
