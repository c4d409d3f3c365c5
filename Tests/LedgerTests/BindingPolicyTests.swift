import Contracts
import GRDB
import Testing

@testable import Ledger

@Suite("Bindings: one receipt replayed by many users, under both policies")
struct BindingPolicyTests {
    let t0 = Make.t0
    let receipt = Make.result(Make.renewals("1000", count: 2))

    @Test func transferMovesThePurchaseToEachNewUserAndGrantsNothingTwice() async throws {
        let ledger = try await LedgerFixture(policy: .transfer)
        let first = try await ledger.record("u-1", receipt, at: t0)
        #expect(first.granted.count == 2)
        var granted = first.granted.count
        for user in ["u-2", "u-3", "u-4"] {
            let outcome = try await ledger.record(user, receipt, at: t0 + 1_000)
            granted += outcome.granted.count
            #expect(outcome.granted.isEmpty)
            #expect(outcome.alreadyGranted.count == 2)
            #expect(outcome.entitlements.map(\.originalTransactionID) == ["1000"])
            #expect(try await ledger.owner("1000") == user)
        }
        #expect(granted == 2)
        #expect(try await ledger.entitlements("u-1", at: t0).isEmpty, "the first user no longer holds it")
        let transfers = try await ledger.events().filter { $0.topic == "binding.transferred" }
        #expect(transfers.map(\.bindingTransferred.fromUserID) == ["u-1", "u-2", "u-3"])
        #expect(transfers.map(\.bindingTransferred.toUserID) == ["u-2", "u-3", "u-4"])
        // The history has no reader (nothing reads it but an operator): looked at in SQLite's file.
        let sqlite = try #require(ledger.store as? SQLiteLedgerStore)
        let history = try await sqlite.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM binding_history WHERE original_transaction_id = '1000'")
        }
        #expect(history == 3, "every move is kept")
    }

    @Test(arguments: StoreKind.allCases) func keepRefusesEveryOtherUserAndChangesNothing(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, policy: .keep)
        _ = try await ledger.record("u-1", receipt, at: t0)
        let head = try await ledger.headSeq()
        for user in ["u-2", "u-3"] {
            await #expect(throws: LedgerFailure.alreadyBound) {
                _ = try await ledger.record(user, receipt, at: t0 + 1_000)
            }
        }
        #expect(try await ledger.owner("1000") == "u-1")
        #expect(try await ledger.headSeq() == head)
        #expect(try await ledger.entitlements("u-2", at: t0).isEmpty)
        let again = try await ledger.record("u-1", receipt, at: t0 + 2_000)
        #expect(again.alreadyGranted.count == 2)
    }

    /// The other purchase bought before the held one is bound first (purchases are bound
    /// oldest first); the refusal must undo that binding too.
    @Test(arguments: StoreKind.allCases, [Int64(-60_000), 0])
    func keepRefusesAMixedReceiptAndLeavesNoneOfItWritten(_ store: StoreKind, otherBoughtAt offset: Int64) async throws {
        let ledger = try await LedgerFixture(store, policy: .keep)
        _ = try await ledger.record("u-1", receipt, at: t0)
        let mixed = Make.result(Make.renewals("1000", count: 2) + [Make.transaction("5000", purchased: t0 + offset)])
        await #expect(throws: LedgerFailure.alreadyBound) {
            _ = try await ledger.record("u-2", mixed, at: t0 + 1_000)
        }
        #expect(try await ledger.owner("5000") == nil, "the other purchase was not bound either")
    }
}
