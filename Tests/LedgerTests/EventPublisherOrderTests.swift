import Contracts
import Foundation
import Logging
import Testing
import ZeroMQ
import ZeroMQTestSupport

@testable import Ledger

/// The ledger's PUB socket posts each commit's events: some before the
/// socket runs (queued), most after (straight to libzmq). A subscriber sees
/// every live event once, in seq order, and the early ones before them.
@Suite(.timeLimit(.minutes(1))) struct EventPublisherOrderTests {
    static func commit(_ seqs: ClosedRange<UInt64>) -> [CommittedEvent] {
        seqs.map { seq in
            let event = LedgerEvent.with {
                $0.seq = seq
                $0.topic = EventTopic.transactionGranted.rawValue
            }
            return CommittedEvent(event: event, bytes: (try? event.serializedBytes()) ?? [])
        }
    }

    /// The seq of the next event the subscriber gets, waiting up to `timeout`.
    static func nextSeq(_ subscriber: ZMQSocket, timeout: Duration = .seconds(5)) async throws -> UInt64? {
        guard let frames = try await subscriber.receive(within: timeout) else { return nil }
        return try LedgerEvent(serializedBytes: frames[1]).seq
    }

    @Test func everyEventArrivesOnceInSeqOrderWhetherSentDirectlyOrQueued() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("publisher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = "ipc://\(directory.path)/events"
        let context = ZMQContext()
        let publisher = EventPublisher(context: context, endpoint: endpoint, logger: Logger(label: "test"))
        // Before the socket runs, nothing can go directly: these wait in the socket loop's outbox.
        publisher.publish(Self.commit(1...3))
        let subscriber = try ZMQSocket(context: context, type: .sub)
        defer { subscriber.close() }
        try subscriber.setLinger(milliseconds: 0)
        try subscriber.subscribe([])
        try subscriber.connect(endpoint)
        let running = Task { try await publisher.run() }
        do {
            try await Self.expectOrder(publisher, subscriber)
        } catch {
            Issue.record("\(error)")
        }
        running.cancel()
        _ = await running.result
    }

    /// Joins the subscriber, publishes 2,000 live events in 500 commits and checks what it hears.
    static func expectOrder(_ publisher: EventPublisher, _ subscriber: ZMQSocket) async throws {
        // A PUB drops what it sends before a subscriber has joined: announce
        // (seq 0, skipped below) until one is heard, bounded.
        var joined = false
        for _ in 0..<500 where !joined {
            publisher.publish(commit(0...0))
            joined = try await nextSeq(subscriber, timeout: .milliseconds(20)) != nil
        }
        try #require(joined, "the subscriber joined")

        // Live, commits go straight to libzmq; each arrives after everything before it.
        for first in stride(from: UInt64(4), through: 2_000, by: 4) {
            publisher.publish(commit(first...(first + 3)))
        }
        var seqs: [UInt64] = []
        while seqs.last != 2_003, let seq = try await nextSeq(subscriber) {
            if seq != 0 { seqs.append(seq) }
        }
        // 1...3 went out from the outbox, most likely before the subscriber
        // joined; any it heard came before every live event, in order.
        let early = seqs.prefix { $0 <= 3 }
        #expect(early.elementsEqual(early.sorted()))
        #expect(Array(seqs.dropFirst(early.count)) == Array(4...2_003), "every live event once, in order")
    }
}
