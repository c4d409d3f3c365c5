import Contracts
import Foundation
import GRDB
import Testing

@testable import Ledger

@Suite("GET /v1/users/{id}/transactions: credited transactions, newest first, in pages")
struct CreditListingTests {
    static func page(_ ledger: LedgerFixture, _ user: String, after: String = "", limit: UInt32 = 0) async throws -> TransactionsPage {
        try await CreditListing.page(
            .with {
                $0.userID = user
                $0.after = after
                $0.limit = limit
            }, store: ledger.store)
    }

    @Test(arguments: StoreKind.allCases) func everyCreditNewestFirstWithItsEventSeqAcrossPages(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 3)), at: Make.t0)
        _ = try await ledger.record("u-2", Make.result(Make.renewals("3000", count: 1)), at: Make.t0)
        _ = try await ledger.record("u-1", Make.result([Make.transaction("2000", product: "coins", purchased: Make.t0 + 1)]), at: Make.t0 + 1)

        var listed: [CreditedTransaction] = []
        var cursor = ""
        for _ in 0..<10 {
            let page = try await Self.page(ledger, "u-1", after: cursor, limit: 2)
            #expect(page.transactions.count <= 2)
            listed += page.transactions
            cursor = page.next
            if cursor.isEmpty { break }
        }
        #expect(listed.map(\.transactionID) == ["2000", "1000-2", "1000-1", "1000"])
        let granted = try await ledger.events().filter { $0.topic == "transaction.granted" }
        let seqByID = Dictionary(uniqueKeysWithValues: granted.map { ($0.transactionGranted.grant.transactionID, $0.seq) })
        for transaction in listed {
            #expect(transaction.seq == seqByID[transaction.transactionID])
            #expect(transaction.state == .granted)
            #expect(transaction.environment == .sandbox)
        }
    }

    @Test(arguments: StoreKind.allCases) func aRefundShowsAsRevoked(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await ledger.record("u-1", Make.result([Make.transaction("1000", product: "pass", purchased: Make.t0)]), at: Make.t0)
        _ = try await ledger.record(
            "u-1", Make.result([Make.transaction("1000", product: "pass", purchased: Make.t0, cancelled: Make.t0 + 5)]),
            at: Make.t0 + 10)
        let page = try await Self.page(ledger, "u-1")
        #expect(page.transactions.map(\.state) == [.revoked])
        #expect(page.next.isEmpty)
    }

    @Test(arguments: ["x", "!!!", "MTIz"])
    func aCursorTheLedgerDidNotMakeIsABadRequest(_ cursor: String) async throws {
        let ledger = try await LedgerFixture()
        await #expect(throws: LedgerFailure.badRequest("after is not a cursor of this list")) {
            try await Self.page(ledger, "u-1", after: cursor)
        }
    }

    @Test func aCursorSurvivesItsToken() {
        let cursor = CreditCursor(grantedSeq: 42, environment: "Production", transactionID: "2000000123.45")
        #expect(CreditCursor(token: cursor.token) == cursor)
    }

    @Test func creditsBeforeTheMigrationTakeTheSeqOfTheirEvent() async throws {
        let queue = try DatabaseQueue()
        try LedgerSchema.migrator.migrate(queue, upTo: "v1")
        let event = LedgerEvent.with {
            $0.seq = 7
            $0.topic = "transaction.granted"
            $0.environment = .production
            $0.userID = "u-1"
            $0.transactionGranted = .with { $0.grant = .with { $0.transactionID = "1000" } }
        }
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO transactions (environment, transaction_id, original_transaction_id, product_id, quantity,
                        purchase_date_ms, is_upgraded, granted_to, granted_at_ms)
                    VALUES ('Production', '1000', '1000', 'coins', 1, 1, 0, 'u-1', 1),
                           ('Production', '999', '999', 'coins', 1, 1, 0, 'u-1', 1)
                    """)
            try db.execute(
                sql: "INSERT INTO events (seq, topic, occurred_at_ms, event) VALUES (7, 'transaction.granted', 1, ?)",
                arguments: [Data(try event.serializedBytes() as [UInt8])])
        }
        try LedgerSchema.migrator.migrate(queue)
        let seqs = try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT transaction_id, granted_seq FROM transactions ORDER BY transaction_id")
                .map { [$0[0] as String: $0[1] as Int64?] }
        }
        #expect(seqs == [["1000": 7], ["999": nil]])
    }
}
