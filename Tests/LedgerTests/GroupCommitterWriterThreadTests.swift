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

/// A store that commits on the caller's thread, as SQLite does, and notes
/// where each commit ran and by which entry.
private final class ThreadNotingStore: BlockingLedgerStore, Sendable {
    let inner: SQLiteLedgerStore
    let blockingCommitThreads = Mutex<[String]>([])
    let asyncCommits = Atomic<Int>(0)

    init(inner: SQLiteLedgerStore) { self.inner = inner }

    func commitBlocking<Output: Sendable>(
        units: Int, _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> [UnitOutcome<Output>] {
        blockingCommitThreads.withLock { $0.append(OSThread.currentName ?? "") }
        return try inner.commitBlocking(units: units, apply)
    }

    func commit<Output: Sendable>(
        units: Int, prefetch: LedgerPrefetch,
        _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) async throws -> [UnitOutcome<Output>] {
        asyncCommits.add(1, ordering: .relaxed)
        return try await inner.commit(units: units, prefetch: prefetch, apply)
    }

    func read<Output: Sendable>(_ body: @escaping @Sendable (any LedgerReader) throws -> Output) async throws -> Output {
        try await inner.read(body)
    }
}

@Suite("Group commit: a store that blocks its caller commits on the writer's own thread", .timeLimit(.minutes(1)))
struct GroupCommitterWriterThreadTests {
    /// A committer over an in-memory SQLite ledger whose commits note their thread.
    private static func committerOnThreadNotingStore() async throws -> (LedgerFixture, ThreadNotingStore, GroupCommitter) {
        let sqlite = try SQLiteLedgerStore.inMemory()
        let ledger = try await LedgerFixture(store: sqlite)
        let store = ThreadNotingStore(inner: sqlite)
        let committer = GroupCommitter(
            store: store, rules: ledger.rules, clock: { Make.t0 }, logger: Logger(label: "test"), publish: { _ in })
        return (ledger, store, committer)
    }

    @Test func everyGroupCommitsOnTheLedgerWriterThreadAndTheWriterStops() async throws {
        let (_, store, committer) = try await Self.committerOnThreadNotingStore()
        let running = Task { try await committer.run() }
        for index in 0..<5 {
            let work = LedgerWork.record(
                RecordRequest.with {
                    $0.userID = "u-\(index)"
                    $0.result = Make.result(Make.renewals("\(1_000 + index)", count: 1))
                })
            guard case .recorded(let outcome) = try await committer.submit(work, requestID: "r-\(index)") else {
                throw LedgerFixture.Unexpected()
            }
            #expect(outcome.granted.map { $0.transactionID } == ["\(1_000 + index)"])
        }
        running.cancel()
        try await running.value
        let threads = store.blockingCommitThreads.withLock { $0 }
        #expect(!threads.isEmpty)
        #expect(threads.allSatisfy { $0 == "ledger-writer" }, "committed on \(threads)")
        #expect(store.asyncCommits.load(ordering: .relaxed) == 0)
        await #expect(throws: GroupCommitter.Stopped.self) {
            try await committer.submit(LedgerWork.record(RecordRequest()), requestID: "after")
        }
    }

    @Test func theRequestSocketIsServedOnTheWriterThreadWhichTakesAndCommitsEachRecord() async throws {
        let (ledger, store, committer) = try await Self.committerOnThreadNotingStore()
        let host = try #require(committer.socketHost, "a store committed on the writer's thread hosts the socket")
        let handler = LedgerRequestHandler(
            committer: committer, store: store, view: ledger.rules.view, clock: { Make.t0 }, logger: Logger(label: "test"),
            replayBatchLimit: 100)
        let takenOn = Mutex<Set<String>>([])
        let context = ZMQContext()
        let server = EnvelopeServer(context: context, endpoint: "tcp://127.0.0.1:0", host: host, logger: Logger(label: "test")) {
            envelope, reply in
            takenOn.withLock { _ = $0.insert(OSThread.currentName ?? "") }
            return handler.handle(envelope, reply: reply)
        }
        let writer = Task { try await committer.run() }
        let serving = Task { try await server.run() }
        #expect(await eventually { server.endpoint != nil })
        let client = try ZMQSocket(context: context, type: .dealer)
        defer { client.close() }
        try client.setLinger(milliseconds: 0)
        try client.connect(try #require(server.endpoint))
        for index in 0..<20 {
            let record = Envelope(
                requestID: "r-\(index)",
                body: .recordRequest(
                    .with {
                        $0.userID = "u-\(index)"
                        $0.result = Make.result(Make.renewals("\(2_000 + index)", count: 1))
                    }))
            _ = try client.send(RequestFrame.encode(correlation: UInt64(index), payload: record.frame()))
        }
        var granted: [UInt64: [String]] = [:]
        while granted.count < 20, let reply = try await client.receive(within: .seconds(10)).flatMap(RequestFrame.decode) {
            guard case .recordOutcome(let outcome) = try Envelope(frame: reply.1).body else { break }
            granted[reply.0] = outcome.granted.map(\.transactionID)
        }
        #expect(granted == Dictionary(uniqueKeysWithValues: (0..<20).map { (UInt64($0), ["\(2_000 + $0)"]) }))
        #expect(takenOn.withLock { $0 } == ["ledger-writer"], "taken on the writer's thread, no socket thread between")
        #expect(store.blockingCommitThreads.withLock { $0 }.allSatisfy { $0 == "ledger-writer" })
        // The endpoint closes first, then the writer: as the ledger stops.
        serving.cancel()
        try await serving.value
        writer.cancel()
        try await writer.value
    }

    @Test func aStoreCommittingInLanesHostsNoSocket() async throws {
        let postgresLike = LanesOnlyStore(inner: try SQLiteLedgerStore.inMemory())
        let committer = GroupCommitter(
            store: postgresLike, rules: try await LedgerFixture(store: postgresLike.inner).rules, clock: { Make.t0 },
            logger: Logger(label: "test"), publish: { _ in })
        #expect(committer.socketHost == nil)
    }
}

/// A store with only the async commit, as PostgreSQL's.
private final class LanesOnlyStore: LedgerStore, Sendable {
    let inner: SQLiteLedgerStore
    init(inner: SQLiteLedgerStore) { self.inner = inner }

    func commit<Output: Sendable>(
        units: Int, prefetch: LedgerPrefetch,
        _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) async throws -> [UnitOutcome<Output>] {
        try await inner.commit(units: units, prefetch: prefetch, apply)
    }

    func read<Output: Sendable>(_ body: @escaping @Sendable (any LedgerReader) throws -> Output) async throws -> Output {
        try await inner.read(body)
    }
}
