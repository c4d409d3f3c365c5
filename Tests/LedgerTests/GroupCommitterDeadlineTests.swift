import Contracts
import Logging
import Synchronization
import TaskOutcome
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

@Suite("The ledger's deadlines and its writer's stop", .timeLimit(.minutes(1)))
struct LedgerDeadlineTests {
    static func committer(_ ledger: LedgerFixture, now: Int64 = Make.t0) -> GroupCommitter {
        GroupCommitter(
            store: ledger.store, rules: ledger.rules, clock: { now }, logger: Logger(label: "test"), publish: { _ in })
    }

    static func record(deadline: Int64) -> Envelope {
        Envelope(
            requestID: "r", deadlineMilliseconds: deadline,
            body: .recordRequest(.with {
                $0.userID = "u-1"
                $0.result = Make.result(Make.renewals("1000", count: 1))
            }))
    }

    @Test func aRequestWhoseDeadlinePassedBeforeItArrivedIsAnsweredDeadlineExceeded() async throws {
        let ledger = try await LedgerFixture()
        // The writer's clock is behind: it would still take the work. The handler must not hand it over.
        let committer = Self.committer(ledger, now: Make.t0 - 10)
        let handler = LedgerRequestHandler(
            committer: committer, store: ledger.store, view: ledger.rules.view, clock: { Make.t0 },
            logger: Logger(label: "test"), replayBatchLimit: 100)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await committer.run() }
            let late = await handler.handle(Self.record(deadline: Make.t0))
            guard case .failure(let failure) = late.body else { throw LedgerFixture.Unexpected() }
            #expect(failure.failureCode == .deadlineExceeded)
            #expect(failure.retryable)
            #expect(late.requestID == "r")
            group.cancelAll()
        }
        #expect(try await ledger.headSeq() == 0, "nothing was recorded")
    }

    @Test func workPastItsDeadlineInTheQueueIsAnsweredDeadlineExceeded() async throws {
        let ledger = try await LedgerFixture()
        // The writer's clock is past the deadline the handler's clock still allowed.
        let committer = Self.committer(ledger, now: Make.t0 + 10)
        let handler = LedgerRequestHandler(
            committer: committer, store: ledger.store, view: ledger.rules.view, clock: { Make.t0 },
            logger: Logger(label: "test"), replayBatchLimit: 100)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await committer.run() }
            let answer = await handler.handle(Self.record(deadline: Make.t0 + 5))
            guard case .failure(let failure) = answer.body else { throw LedgerFixture.Unexpected() }
            #expect(failure.failureCode == .deadlineExceeded)
            group.cancelAll()
        }
        #expect(try await ledger.headSeq() == 0)
    }

    @Test func workSubmittedAfterTheWriterStoppedIsRefusedWithStopped() async throws {
        let ledger = try await LedgerFixture()
        let committer = Self.committer(ledger)
        let running = Task { try await committer.run() }
        // Cancelling the service stops it as graceful shutdown does: what was queued is finished.
        running.cancel()
        try await running.value
        let request = RecordRequest.with {
            $0.userID = "u-1"
            $0.result = Make.result(Make.renewals("1000", count: 1))
        }
        let submit = Task { try await committer.submit(.record(request), requestID: "after-stop") }
        guard case .failure(let error)? = await outcome(of: submit, within: .seconds(30)) else {
            Issue.record("a submit after the stop was taken (or waits for ever)")
            return
        }
        #expect(error is GroupCommitter.Stopped)
        #expect(try await ledger.headSeq() == 0)
    }
}
