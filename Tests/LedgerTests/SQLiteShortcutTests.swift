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

    /// The partial index the shortcut reads through is built over a ledger's existing rows.
    @Test func transactionsUnclaimedBeforeTheMigrationAreFoundAfterIt() async throws {
        let queue = try DatabaseQueue()
        try LedgerSchema.migrator.migrate(queue, upTo: LastingPurchasesMigration.name)
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO transactions (environment, transaction_id, original_transaction_id, product_id, quantity,
                        purchase_date_ms, is_upgraded, granted_to, granted_at_ms)
                    VALUES ('Sandbox', 'p-1', 'p', 'coins', 1, 2, 0, NULL, NULL),
                           ('Sandbox', 'p-0', 'p', 'coins', 1, 1, 0, 'u-1', 1)
                    """)
        }
        try LedgerSchema.migrator.migrate(queue)
        let unclaimed = try await queue.read { db in
            try SQLiteLedgerSession(db: db).unclaimedTransactions(of: SubscriptionKey(.sandbox, "p")).map(\.key.transactionID)
        }
        #expect(unclaimed == ["p-1"])
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

    /// The lasting one-off purchases of a user, by the protocol's definition (`LedgerReader`):
    /// no expiry, and a lasting kind stated, or no kind and a listed product.
    private static func lastingByDefinition(
        _ transactions: [StoredTransaction], listed: Set<String>
    ) -> [StoredTransaction] {
        transactions.filter { row in
            row.expiresDateMs == nil
                && (row.kind == .nonConsumable || row.kind == .nonRenewing || (row.kind == nil && listed.contains(row.productID)))
        }.sorted {
            ($0.originalTransactionID, StoredEnvironment.name($0.key.environment), $0.purchaseDateMs, $0.key.transactionID)
                < ($1.originalTransactionID, StoredEnvironment.name($1.key.environment), $1.purchaseDateMs, $1.key.transactionID)
        }
    }

    @Test(arguments: [[String](), ["com.example.lifetime"]])
    func lastingPurchasesAreThoseOfTheDefinitionWithOrWithoutListedProducts(listed: [String]) async throws {
        let store = try SQLiteLedgerStore.inMemory()
        let t0 = self.t0
        // Every kind, stated or not, with and without expiry, listed or not; one purchase of another user.
        let rows: [(otid: String, product: String, kind: ProductKind?, expires: Int64?, user: String)] = [
            ("nc", "com.example.unlock", .nonConsumable, nil, "u-1"), ("nr", "com.example.season", .nonRenewing, nil, "u-1"),
            ("coin-stated", "com.example.coins", .consumable, nil, "u-1"), ("coin", "com.example.coins", nil, nil, "u-1"),
            ("lifetime", "com.example.lifetime", nil, nil, "u-1"), ("sub", "com.example.pro", .autoRenewable, t0 + 1, "u-1"),
            ("nr-dated", "com.example.season", .nonRenewing, t0 + 1, "u-1"), ("other", "com.example.unlock", .nonConsumable, nil, "u-2"),
        ]
        let outcomes = try await store.commit(units: 1) { _, session in
            var bound: [StoredTransaction] = []
            for (index, row) in rows.enumerated() {
                for item in 0..<2 {
                    var stored = StoredTransaction(
                        Make.transaction("\(row.otid)-\(item)", otid: row.otid, product: row.product,
                            purchased: t0 - Int64(index * 10 + item), expires: row.expires),
                        environment: item == 0 ? .sandbox : .production)
                    stored.kind = row.kind
                    #expect(try session.insertIfNew(stored))
                    if row.user == "u-1" { bound.append(stored) }
                }
                for environment in [AppleEnvironment.sandbox, .production] {
                    try session.bind(SubscriptionKey(environment, row.otid), to: row.user, from: nil, at: t0, requestID: "r")
                }
            }
            return (try session.oneOffPurchases(ownedBy: "u-1", listedProducts: listed), bound)
        }
        let (shortcut, bound) = try outcomes[0].result.get()
        let expected = Self.lastingByDefinition(bound, listed: Set(listed))
        #expect(shortcut == expected)
        #expect(Set(shortcut.map(\.originalTransactionID)) == Set(["nc", "nr"] + (listed.isEmpty ? [] : ["lifetime"])))
    }

    /// Several units in one group: a `keep` refusal after a binding it made is undone alone, and
    /// the credits around it keep the seqs of their events (the failed unit took none).
    @Test func aRefusedUnitInAGroupUndoesItsBindingAndTheOthersKeepTheirSeqs() async throws {
        let store = try SQLiteLedgerStore.inMemory()
        let rules = LedgerRules(policy: .keep)
        let t0 = self.t0
        _ = try await store.commit(units: 1) { _, session in
            try rules.apply(
                .record(.with {
                    $0.userID = "u-1"
                    $0.result = Make.result([Make.transaction("held", purchased: t0)])
                }), requestID: "r0", now: t0, session: session)
        }
        let works: [(String, [Transaction])] = [
            ("u-2", [Make.transaction("a", purchased: t0)]),
            // "early" is bound before "held" refuses the unit: purchases are bound oldest first.
            ("u-3", [Make.transaction("early", purchased: t0 - 60_000), Make.transaction("held", purchased: t0)]),
            ("u-4", [Make.transaction("b", purchased: t0)]),
        ]
        let outcomes = try await store.commit(units: works.count) { unit, session in
            try rules.apply(
                .record(.with {
                    $0.userID = works[unit].0
                    $0.result = Make.result(works[unit].1)
                }), requestID: "r\(unit + 1)", now: t0, session: session)
        }
        #expect(throws: LedgerFailure.alreadyBound) { try outcomes[1].result.get() }
        #expect(outcomes[0].events.map(\.event.seq) == [2])
        #expect(outcomes[2].events.map(\.event.seq) == [3])
        let (early, seqs) = try await store.read { reader in
            (
                try reader.owner(of: SubscriptionKey(.sandbox, "early")),
                try ["a", "b"].map { try reader.transaction(TransactionKey(.sandbox, $0)) }
            )
        }
        #expect(early == nil, "the refused unit's binding is undone")
        let stored = try await store.writer.read { db in
            try Int64.fetchAll(db, sql: "SELECT granted_seq FROM transactions WHERE transaction_id IN ('a', 'b') ORDER BY transaction_id")
        }
        #expect(stored == [2, 3])
        #expect(seqs.map { $0?.grantedTo } == ["u-2", "u-4"])
    }

    /// A group of one runs without a savepoint: its refusal rolls the whole transaction back,
    /// which must undo exactly what a savepoint would have, and take no seq.
    @Test func aRefusedUnitAloneInItsGroupUndoesItsBindingAndTakesNoSeq() async throws {
        let store = try SQLiteLedgerStore.inMemory()
        let rules = LedgerRules(policy: .keep)
        let t0 = self.t0
        func record(_ user: String, _ transactions: [Transaction], _ requestID: String) async throws
            -> UnitOutcome<LedgerWorkOutput>
        {
            try await store.commit(units: 1) { _, session in
                try rules.apply(
                    .record(.with {
                        $0.userID = user
                        $0.result = Make.result(transactions)
                    }), requestID: requestID, now: t0, session: session)
            }[0]
        }
        _ = try await record("u-1", [Make.transaction("held", purchased: t0)], "r0")
        let refused = try await record(
            "u-3", [Make.transaction("early", purchased: t0 - 60_000), Make.transaction("held", purchased: t0)], "r1")
        #expect(throws: LedgerFailure.alreadyBound) { try refused.result.get() }
        #expect(refused.events.isEmpty)

        let next = try await record("u-2", [Make.transaction("a", purchased: t0)], "r2")
        #expect(next.events.map(\.event.seq) == [2], "the refused unit took no seq")
        let (early, credited) = try await store.read { reader in
            (try reader.owner(of: SubscriptionKey(.sandbox, "early")), try reader.transaction(TransactionKey(.sandbox, "early")))
        }
        #expect(early == nil, "the refused unit's binding is undone")
        #expect(credited == nil, "and so is its transaction")
    }
}

