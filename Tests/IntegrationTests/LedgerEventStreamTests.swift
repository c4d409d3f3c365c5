import Contracts
import Foundation
import LedgerClient
import Synchronization
import Testing
import ZeroMQ

/// The ledger's event stream as a subscriber sees it: a real ledger process,
/// a subscriber that leaves mid-stream and comes back with its last seq.
@Suite("Ledger event stream", .serialized)
struct LedgerEventStreamTests {
    /// Collects what a subscriber delivers.
    final class Received: Sendable {
        private let events = Mutex<[LedgerEvent]>([])
        func append(_ event: LedgerEvent) { events.withLock { $0.append(event) } }
        var all: [LedgerEvent] { events.withLock { $0 } }
        var lastSeq: UInt64 { events.withLock { $0.last?.seq ?? 0 } }
    }

    /// Records `count` one-transaction purchases with ids prefix-0...; each answer waited for.
    static func produce(_ client: LedgerClient, prefix: String, count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    let outcome = try await client.record(
                        recordRequest(user: "u-\(index % 7)", transactionIDs: ["\(prefix)-\(index)"]),
                        requestID: "\(prefix)-\(index)")
                    #expect(outcome.granted.count == 1)
                }
            }
            try await group.waitForAll()
        }
    }

    static func waitFor(_ received: Received, seq: UInt64) async throws {
        for _ in 0..<600 where received.lastSeq < seq {
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func aSubscriberThatReconnectsWithItsLastSeqGetsEveryEventOnceInOrder() async throws {
        let ledger = try await LedgerProcess()
        let context = ZMQContext()
        let client = ledger.client(context)
        let clientRunner = Task { try await client.run() }
        do {
            let received = Received()
            // First connection: live from the start.
            let subscriber = ledger.subscriber(context)
            let first = Task { try await subscriber.run(after: 0) { received.append($0) } }
            try await Self.produce(client, prefix: "a", count: 150)
            try await Self.waitFor(received, seq: 150)
            first.cancel()
            _ = await first.result
            let seenBeforeLeaving = received.lastSeq
            #expect(seenBeforeLeaving == 150)

            // While it is away, more happens.
            try await Self.produce(client, prefix: "b", count: 120)

            // Back with its last seq: replay fills the gap, then it follows live.
            let second = Task { try await subscriber.run(after: seenBeforeLeaving) { received.append($0) } }
            try await Self.waitFor(received, seq: 270)
            try await Self.produce(client, prefix: "c", count: 80)
            try await Self.waitFor(received, seq: 350)
            second.cancel()
            _ = await second.result

            let events = received.all
            #expect(events.map(\.seq) == Array(1...350), "every event once, in order")
            let ids = events.map(\.transactionGranted.grant.transactionID)
            #expect(Set(ids).count == 350)
            #expect(Set(ids.filter { $0.hasPrefix("b-") }).count == 120)
        } catch {
            Issue.record("\(error)")
        }
        clientRunner.cancel()
        _ = await clientRunner.result
        #expect(await ledger.stop() == 0)
    }

    @Test func aSubscriberStartingMidwayGetsOnlyWhatFollows() async throws {
        let ledger = try await LedgerProcess()
        let context = ZMQContext()
        let client = ledger.client(context)
        let clientRunner = Task { try await client.run() }
        do {
            try await Self.produce(client, prefix: "a", count: 40)
            let received = Received()
            let subscriber = ledger.subscriber(context)
            let task = Task { try await subscriber.run(after: 25) { received.append($0) } }
            try await Self.waitFor(received, seq: 40)
            task.cancel()
            _ = await task.result
            #expect(received.all.map(\.seq) == Array(26...40))
        } catch {
            Issue.record("\(error)")
        }
        clientRunner.cancel()
        _ = await clientRunner.result
        #expect(await ledger.stop() == 0)
    }
}
