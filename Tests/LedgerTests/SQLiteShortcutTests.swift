import Contracts
import GRDB
import Testing

@testable import Ledger

/// The SQLite session answers some reads with narrower SQL than the rule it
/// stands for (fewer rows and columns on the record path), and writes a
/// credit in one statement where the rule's definition takes two. Each must
/// give exactly what the rule's own definition gives.
@Suite("SQLite shortcuts agree with the rules they stand for")
struct SQLiteShortcutTests {
    let t0 = Make.t0

    /// Every state a stored transaction can be in, for one purchase.
    private func purchase(_ otid: String) -> [StoredTransaction] {
        let states: [(suffix: String, granted: String?, cancelled: Int64?, upgraded: Bool)] = [
            ("unclaimed", nil, nil, false), ("granted", "u-1", nil, false), ("refunded", nil, t0, false),
            ("refunded-granted", "u-1", t0, false), ("upgraded", nil, t0, true), ("upgraded-granted", "u-1", t0, true),
        ]
        return states.enumerated().map { index, state in
            var stored = StoredTransaction(
                Make.transaction("\(otid)-\(state.suffix)", otid: otid, purchased: t0 + Int64(10 - index)),
                environment: .sandbox)
            stored.grantedTo = state.granted
            stored.grantedAtMs = state.granted.map { _ in t0 }
            stored.cancellationDateMs = state.cancelled
            stored.isUpgraded = state.upgraded
            return stored
        }
    }

    @Test func unclaimedTransactionsAreThoseOfThePurchaseCreditedToNobodyAndNotRevoked() async throws {
        let store = try SQLiteLedgerStore.inMemory()
        let outcomes = try await store.commit(units: 1) { _, session in
            for stored in purchase("p") + purchase("other") { #expect(try session.insertIfNew(stored)) }
            let key = SubscriptionKey(.sandbox, "p")
            let byRule = try session.transactions(of: key).filter { $0.grantedTo == nil && !$0.isRevoked }
            return (try session.unclaimedTransactions(of: key), byRule)
        }
        let (shortcut, byRule) = try outcomes[0].result.get()
        #expect(shortcut.map(\.key.transactionID) == ["p-upgraded", "p-unclaimed"], "oldest first")
        #expect(shortcut == byRule)
    }

    @Test func hasSubscriptionIsWhetherTheSubscriptionRowExists() async throws {
        let ledger = try await LedgerFixture()
        _ = try await ledger.record("u-1", Make.result(Make.renewals("sub", count: 1)), at: t0)
        _ = try await ledger.record("u-1", Make.result([Make.transaction("coin", product: "coins", purchased: t0)]), at: t0)
        for otid in ["sub", "coin", "never-seen"] {
            let key = SubscriptionKey(.sandbox, otid)
            let (has, record) = try await ledger.store.read { (try $0.hasSubscription(key), try $0.subscription(key)) }
            #expect(has == (record != nil), "\(otid)")
            #expect(has == (otid == "sub"))
        }
    }

    /// `insertIfNew(_:creditedBy:)` stores the seq its event is about to take: the credit's seq
    /// must be that of the `transaction.granted` event that announced it, as `setGrantedSeq` sets.
    @Test func aNewCreditIsStoredWithTheSeqOfTheEventThatAnnouncedIt() async throws {
        let ledger = try await LedgerFixture()
        _ = try await ledger.record("u-1", Make.result([Make.transaction("first", purchased: t0)]), at: t0)
        _ = try await ledger.record("u-2", Make.result(Make.renewals("sub", count: 3)), at: t0)
        let sqlite = try #require(ledger.store as? SQLiteLedgerStore)
        let stored = try await sqlite.writer.read { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT transaction_id, granted_seq FROM transactions").map {
                    (row: Row) -> (String, Int64?) in (row[0], row[1])
                })
        }
        let announced = try await ledger.events().filter { $0.topic == "transaction.granted" }
        #expect(announced.count == 4)
        for event in announced {
            #expect(stored[event.transactionGranted.grant.transactionID] == Int64(event.seq))
        }
    }
}
