import Contracts
import Logging
import Synchronization
import Testing

@testable import Ledger

/// A store that allows two groups at once and remembers every pair of groups
/// that ran at the same time; `hold` keeps commits from finishing until released.
private final class TwoLaneStore: LedgerStore, Sendable {
    struct State {
        var running: [Int: LedgerPrefetch] = [:]
        var nextID = 0
        var mostAtOnce = 0
        var overlappedWhileRunning = false
        var held: [CheckedContinuation<Void, Never>] = []
        var holding: Bool
    }

    let inner: any LedgerStore
    let state: Mutex<State>
    let started: AsyncStream<Int>
    private let startedSink: AsyncStream<Int>.Continuation

    init(inner: any LedgerStore, holding: Bool) {
        self.inner = inner
        state = Mutex(State(holding: holding))
        (started, startedSink) = AsyncStream.makeStream()
    }

    var concurrentCommits: Int { 2 }

    func commit<Output: Sendable>(
        units: Int, prefetch: LedgerPrefetch,
        _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) async throws -> [UnitOutcome<Output>] {
        let id = state.withLock { state in
            if state.running.values.contains(where: { $0.overlaps(prefetch) }) { state.overlappedWhileRunning = true }
            let id = state.nextID
            state.nextID += 1
            state.running[id] = prefetch
            state.mostAtOnce = max(state.mostAtOnce, state.running.count)
            return id
        }
        startedSink.yield(id)
        await withCheckedContinuation { continuation in
            let wait = state.withLock { state in
                guard state.holding else { return false }
                state.held.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
        // Other tasks get to run while this group is "on its way to disk".
        for _ in 0..<20 { await Task.yield() }
        defer { _ = state.withLock { $0.running.removeValue(forKey: id) } }
        return try await inner.commit(units: units, prefetch: prefetch, apply)
    }

    func releaseAll() {
        let held = state.withLock { state in
            state.holding = false
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    func read<Output: Sendable>(_ body: @escaping @Sendable (any LedgerReader) throws -> Output) async throws -> Output {
        try await inner.read(body)
    }
}

@Suite("Group commit: two groups at once, never two about the same rows")
struct GroupCommitterLanesTests {
    static func record(_ user: String, _ transactionID: String) -> LedgerWork {
        .record(
            RecordRequest.with {
                $0.userID = user
                $0.result = Make.result(Make.renewals(transactionID, count: 1))
            })
    }

    static func committer(_ store: some LedgerStore, rules: LedgerRules) -> GroupCommitter {
        GroupCommitter(store: store, rules: rules, clock: { Make.t0 }, logger: Logger(label: "test"), publish: { _ in })
    }

    @Test("Requests about different users commit side by side", .timeLimit(.minutes(1)))
    func disjointGroupsRunAtOnce() async throws {
        let ledger = try await LedgerFixture()
        let store = TwoLaneStore(inner: ledger.store, holding: true)
        let committer = Self.committer(store, rules: ledger.rules)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await committer.run() }
            group.addTask { _ = try await committer.submit(Self.record("u-1", "1000"), requestID: "a") }
            var starts = store.started.makeAsyncIterator()
            _ = await starts.next()
            // The first group is held on its way to disk; the second starts anyway.
            group.addTask { _ = try await committer.submit(Self.record("u-2", "2000"), requestID: "b") }
            _ = await starts.next()
            let mostAtOnce = store.state.withLock(\.mostAtOnce)
            #expect(mostAtOnce == 2)
            store.releaseAll()
            try await group.next()
            try await group.next()
            group.cancelAll()
        }
    }

    @Test("Requests about the same user or purchase never commit at once", .timeLimit(.minutes(1)))
    func overlappingGroupsTakeTurns() async throws {
        let ledger = try await LedgerFixture()
        let store = TwoLaneStore(inner: ledger.store, holding: false)
        let committer = Self.committer(store, rules: ledger.rules)
        let granted = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                try await committer.run()
                return 0
            }
            // Three users, and purchases shared between them: most groups overlap a group in flight.
            // Arrivals are spread out (the assertions hold for any spread) so that groups meet in flight.
            for index in 0..<60 {
                try await Task.sleep(for: .microseconds(Int.random(in: 0...500)))
                group.addTask {
                    let output = try await committer.submit(
                        Self.record("u-\(index % 3)", "\(1_000 + index % 20)"), requestID: "r-\(index)")
                    guard case .recorded(let outcome) = output else { return 0 }
                    return outcome.granted.count
                }
            }
            var granted = 0
            for _ in 0..<60 { granted += try await group.next() ?? 0 }
            group.cancelAll()
            return granted
        }
        let overlapped = store.state.withLock(\.overlappedWhileRunning)
        #expect(!overlapped, "two groups about the same rows ran at once")
        #expect(granted == 20, "each of the 20 purchases granted once")
    }

    @Test("What a group will touch: users, purchases, transactions, notifications, Idempotency-Keys; sweeps touch anything")
    func prefetchesOverlapByAnySharedKey() {
        var a = LedgerPrefetch()
        a.users = ["u-1"]
        var b = LedgerPrefetch()
        b.users = ["u-2"]
        #expect(!a.overlaps(b))
        b.purchases = [SubscriptionKey(.production, "otid-1")]
        #expect(!a.overlaps(b))
        a.purchases = [SubscriptionKey(.sandbox, "otid-1")]
        #expect(!a.overlaps(b), "the same id in another environment is another purchase")
        a.purchases.insert(SubscriptionKey(.production, "otid-1"))
        #expect(a.overlaps(b))
        var c = LedgerPrefetch()
        c.notificationIDs = ["n-1"]
        var d = LedgerPrefetch()
        d.notificationIDs = ["n-1"]
        #expect(c.overlaps(d))
        var e = LedgerPrefetch()
        e.answers = [.init(scope: "key-1", key: "k")]
        var f = LedgerPrefetch()
        f.answers = [.init(scope: "key-1", key: "k")]
        #expect(e.overlaps(f))
        var sweep = LedgerPrefetch()
        sweep.readsBeyondKeys = true
        #expect(sweep.overlaps(LedgerPrefetch()))
    }
}
