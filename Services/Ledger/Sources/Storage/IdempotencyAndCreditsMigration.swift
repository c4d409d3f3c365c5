import Contracts
import Foundation
import GRDB

/// Migration "v2-idempotency-and-credits" (never edited once shipped):
/// - `idempotency_keys`: the first complete answer per (API key, Idempotency-Key),
///   written in the same transaction as the change it reports;
/// - `transactions.granted_seq`: the seq of the `transaction.granted` event that
///   credited a transaction, the order and cursor of a user's transaction list.
enum IdempotencyAndCreditsMigration {
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE idempotency_keys (
                    scope TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL,
                    request_sha256 TEXT NOT NULL,
                    outcome BLOB NOT NULL,
                    created_at_ms INTEGER NOT NULL,
                    PRIMARY KEY (scope, idempotency_key)
                ) WITHOUT ROWID;
                CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at_ms);

                ALTER TABLE transactions ADD COLUMN granted_seq INTEGER;
                """)
        try backfillGrantedSeq(db)
        try db.execute(
            sql: """
                CREATE INDEX transactions_credited ON transactions (granted_to, granted_seq DESC, environment, transaction_id)
                    WHERE granted_to IS NOT NULL;
                """)
    }

    /// Transactions credited before this migration take the seq of their
    /// newest retained `transaction.granted` event; those whose event was
    /// already pruned keep NULL and list after the rest (seq 0).
    private static func backfillGrantedSeq(_ db: Database) throws {
        let update = try db.makeStatement(
            sql: "UPDATE transactions SET granted_seq = ? WHERE environment = ? AND transaction_id = ?")
        let rows = try Row.fetchCursor(
            db, sql: "SELECT seq, event FROM events WHERE topic = 'transaction.granted' ORDER BY seq")
        while let row = try rows.next() {
            let event = try LedgerEvent(serializedBytes: row["event"] as Data)
            guard case .transactionGranted(let granted) = event.payload else { continue }
            try update.execute(arguments: [
                row["seq"] as Int64, StoredEnvironment.name(event.environment), granted.grant.transactionID,
            ])
        }
    }
}
