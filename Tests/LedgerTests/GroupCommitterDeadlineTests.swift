import Contracts
import Logging
import Synchronization
import Testing

@testable import Ledger

@Suite("Group commit: work whose deadline passed is not started")
struct GroupCommitterDeadlineTests {
    @Test("Defect 11: a record whose deadline passed while it waited is refused and writes nothing")
    func workPastItsDeadlineIsNotStarted() async throws {
        let ledger = try await LedgerFixture()
        let now = Mutex<Int64>(Make.t0)
        let committer = GroupCommitter(
            store: ledger.store, rules: ledger.rules, clock: { now.withLock { $0 } }, logger: Logger(label: "test"),
            publish: { _ in })
        let request = RecordRequest.with {
            $0.userID = "u-1"
            $0.result = Make.result(Make.renewals("1000", count: 1))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await committer.run() }
            await #expect(throws: GroupCommitter.DeadlinePassed.self) {
                try await committer.submit(.record(request), requestID: "late", deadline: Make.t0 - 1)
            }
            #expect(try await ledger.headSeq() == 0, "nothing was recorded")
            let output = try await committer.submit(.record(request), requestID: "in-time", deadline: Make.t0 + 1)
            guard case .recorded(let outcome) = output else { throw LedgerFixture.Unexpected() }
            #expect(outcome.granted.map(\.transactionID) == ["1000"])
            group.cancelAll()
        }
    }
}
