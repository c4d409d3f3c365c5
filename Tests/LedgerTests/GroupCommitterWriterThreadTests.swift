import Contracts
import Logging
import OSThread
import Synchronization
import Testing

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
    @Test func everyGroupCommitsOnTheLedgerWriterThreadAndTheWriterStops() async throws {
        let sqlite = try SQLiteLedgerStore.inMemory()
        let ledger = try await LedgerFixture(store: sqlite)
        let store = ThreadNotingStore(inner: sqlite)
        let committer = GroupCommitter(
            store: store, rules: ledger.rules, clock: { Make.t0 }, logger: Logger(label: "test"), publish: { _ in })
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
}
