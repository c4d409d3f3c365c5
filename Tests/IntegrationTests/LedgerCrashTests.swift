import Contracts
import Foundation
import LedgerClient
import Synchronization
import Testing
import ZeroMQ

/// SIGKILL the ledger at random moments while clients record, restart it, and
/// check the promises: every answered record is there, nothing is granted
/// twice, and the event sequence has no gap.
@Suite("Ledger crash safety", .serialized)
struct LedgerCrashTests {
    /// What the clients saw answered.
    final class Ledgerbook: Sendable {
        struct State {
            var answeredGrants: Set<String> = []
            var grantedTwice: [String] = []
            var sent: [[String]] = []
            var answers = 0
            var failures = 0
            var stopped = false
        }
        let state = Mutex(State())
    }

    @Test func killedAtRandomUnderLoadItLosesAndDuplicatesNothing() async throws {
        let ledger = try await LedgerProcess()
        let context = ZMQContext()
        let client = ledger.client(context)
        let clientRunner = Task { try await client.run() }
        let book = Ledgerbook()
        var generator = SystemRandomNumberGenerator()

        // Eight clients record batches of fresh transactions, as fast as answers come.
        let load = Task {
            await withDiscardingTaskGroup { group in
                for worker in 0..<8 {
                    group.addTask {
                        for round in 0..<100_000 {
                            if book.state.withLock({ $0.stopped }) { return }
                            let ids = (0..<3).map { "w\(worker)-\(round)-\($0)" }
                            book.state.withLock { $0.sent.append(ids) }
                            let deadline = Int64(Date().timeIntervalSince1970 * 1_000) + 1_500
                            do {
                                let outcome = try await client.record(
                                    recordRequest(user: "u-\(worker)", transactionIDs: ids), requestID: ids[0],
                                    deadlineMilliseconds: deadline)
                                book.state.withLock { state in
                                    state.answers += 1
                                    for grant in outcome.granted where !state.answeredGrants.insert(grant.transactionID).inserted {
                                        state.grantedTwice.append(grant.transactionID)
                                    }
                                }
                            } catch {
                                book.state.withLock { $0.failures += 1 }
                                try? await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                }
            }
        }

        do {
            for _ in 0..<5 {
                let before = book.state.withLock { $0.answers }
                // Wait for some answers, then a random extra moment.
                for _ in 0..<400 where book.state.withLock({ $0.answers }) < before + 50 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...300, using: &generator)))
                await ledger.kill()
                try await ledger.restart()
            }
            for _ in 0..<400 where book.state.withLock({ $0.answers }) < 100 {
                try await Task.sleep(for: .milliseconds(10))
            }
        } catch {
            Issue.record("\(error)")
        }
        book.state.withLock { $0.stopped = true }
        _ = await load.result

        do {
            let final = book.state.withLock { $0 }
            #expect(final.answers > 100)
            #expect(final.grantedTwice.isEmpty, "an answer granted a transaction already granted")

            let events = try await ledger.replayAll(context)
            #expect(events.map(\.seq) == Array(1...UInt64(events.count)), "no gap in seq")
            let granted = events.filter { $0.topic == "transaction.granted" }.map(\.transactionGranted.grant.transactionID)
            #expect(Set(granted).count == granted.count, "no transaction granted twice")
            #expect(final.answeredGrants.isSubset(of: Set(granted)), "every answered grant survived the kills")

            // Replaying every request ever sent grants only what no answer had granted.
            var regranted: [String] = []
            for ids in final.sent.prefix(300) {
                let outcome = try await client.record(recordRequest(user: "u-r", transactionIDs: ids), requestID: "replay")
                regranted += outcome.granted.map(\.transactionID).filter(final.answeredGrants.contains)
            }
            #expect(regranted.isEmpty)
        } catch {
            Issue.record("\(error)")
        }
        clientRunner.cancel()
        _ = await clientRunner.result
        #expect(await ledger.stop() == 0)
    }
}
