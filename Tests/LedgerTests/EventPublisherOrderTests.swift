import Contracts
import Foundation
import Logging
import Synchronization
import Testing
import ZeroMQ

@testable import Ledger

/// The ledger's PUB socket sends a commit's events on the publisher's thread
/// when nothing waits before them, and through its send loop otherwise
/// (before the socket runs, or behind what the loop holds): either way in
/// seq order. Checked without a socket, where each way out is the test's,
/// and end to end through a real PUB socket and subscriber.
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

    /// The two ways out of a publisher without a socket: what went, in order,
    /// and which way. The send loop's way waits until the test releases it.
    final class Outlet: Sendable {
        private struct State {
            var acceptsNow = false
            var released = false
            var sent: [(seq: UInt64, direct: Bool)] = []
        }
        private let state = Mutex(State())

        func acceptNow(_ accepts: Bool) { state.withLock { $0.acceptsNow = accepts } }
        func release() { state.withLock { $0.released = true } }
        var sent: [(seq: UInt64, direct: Bool)] { state.withLock { $0.sent } }

        func sendNow(_ frames: [[UInt8]]) -> Bool {
            state.withLock { state in
                guard state.acceptsNow else { return false }
                state.sent.append((Self.seq(frames), true))
                return true
            }
        }

        func sendInTurn(_ frames: [[UInt8]]) async {
            for _ in 0..<2_000 where !state.withLock({ $0.released }) { try? await Task.sleep(for: .milliseconds(5)) }
            state.withLock { $0.sent.append((Self.seq(frames), false)) }
        }

        private static func seq(_ frames: [[UInt8]]) -> UInt64 { (try? LedgerEvent(serializedBytes: frames[1]).seq) ?? 0 }
    }

    @Test func aCommitBehindQueuedOnesWaitsItsTurnAndDirectSendingResumesOnceTheyAreOut() async throws {
        let outlet = Outlet()
        let publisher = EventPublisher(
            socket: nil, sendNow: { outlet.sendNow($0) }, sendInTurn: { await outlet.sendInTurn($0) })
        // libzmq would not take 1 now: it and the rest of its commit go to the loop.
        publisher.publish(Self.commit(1...2))
        // libzmq would take 3 now, but 1 and 2 are still queued: 3 and 4 must wait behind them.
        outlet.acceptNow(true)
        publisher.publish(Self.commit(3...4))
        let running = Task { try await publisher.run() }
        outlet.release()
        for _ in 0..<2_000 where publisher.queuedCommitCount > 0 { try await Task.sleep(for: .milliseconds(5)) }
        // Nothing queued any more: the next commit goes straight out.
        publisher.publish(Self.commit(5...6))
        running.cancel()
        _ = await running.result
        #expect(outlet.sent.map(\.seq) == Array(1...6), "in seq order")
        #expect(outlet.sent.map(\.direct) == [false, false, false, false, true, true], "queued while anything was, then directly")
    }

    /// The seq of the next event the subscriber gets, waiting up to `timeout`.
    static func nextSeq(_ subscriber: ZMQSocket, timeout: Duration = .seconds(5)) async throws -> UInt64? {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < timeout {
            if let frames = try subscriber.receive(dontWait: true) {
                return try LedgerEvent(serializedBytes: frames[1]).seq
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    @Test func everyEventArrivesOnceInSeqOrderWhetherSentDirectlyOrQueued() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("publisher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = "ipc://\(directory.path)/events"
        let context = ZMQContext()
        let publisher = EventPublisher(context: context, endpoint: endpoint, logger: Logger(label: "test"))
        // Before the socket runs, nothing can go directly: these wait in the send loop.
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

        // Live, most commits go directly; each arrives after everything before it.
        for first in stride(from: UInt64(4), through: 2_000, by: 4) {
            publisher.publish(commit(first...(first + 3)))
        }
        var seqs: [UInt64] = []
        while seqs.last != 2_003, let seq = try await nextSeq(subscriber) {
            if seq != 0 { seqs.append(seq) }
        }
        // 1...3 went out through the loop, most likely before the subscriber
        // joined; any it heard came before every live event, in order.
        let early = seqs.prefix { $0 <= 3 }
        #expect(early.elementsEqual(early.sorted()))
        #expect(Array(seqs.dropFirst(early.count)) == Array(4...2_003), "every live event once, in order")
    }
}
