import Contracts
import Foundation
import GRDB

/// Idempotent answers and the per-user transaction list (migration
/// "v2-idempotency-and-credits").
extension SQLiteLedgerSession {
    func idempotentAnswer(scope: String, key: String) throws -> StoredIdempotentAnswer? {
        let statement = try cached(.idempotentAnswer,
            """
                SELECT request_sha256, outcome, created_at_ms FROM idempotency_keys
                WHERE scope = ? AND idempotency_key = ?
                """)
        return try Row.fetchOne(statement, arguments: [scope, key]).map { row in
            StoredIdempotentAnswer(
                scope: scope, key: key, requestSHA256: row[0], outcome: Array(row[1] as Data), createdAtMs: row[2])
        }
    }

    func storeIdempotentAnswer(_ answer: StoredIdempotentAnswer) throws {
        let statement = try cached(.storeIdempotentAnswer,
            """
                INSERT INTO idempotency_keys (scope, idempotency_key, request_sha256, outcome, created_at_ms)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (scope, idempotency_key) DO UPDATE SET request_sha256 = excluded.request_sha256,
                    outcome = excluded.outcome, created_at_ms = excluded.created_at_ms
                """)
        try statement.execute(arguments: [
            answer.scope, answer.key, answer.requestSHA256, Data(answer.outcome), answer.createdAtMs,
        ])
    }

    func pruneIdempotentAnswers(before cutoff: Int64) throws -> Int {
        try db.execute(sql: "DELETE FROM idempotency_keys WHERE created_at_ms < ?", arguments: [cutoff])
        return db.changesCount
    }

    func setGrantedSeq(_ transaction: TransactionKey, seq: UInt64) throws {
        let statement = try cached(.setGrantedSeq,
            "UPDATE transactions SET granted_seq = ? WHERE environment = ? AND transaction_id = ?")
        try statement.execute(arguments: [
            Int64(clamping: seq), StoredEnvironment.name(transaction.environment), transaction.transactionID,
        ])
    }

    func creditedTransactions(of user: String, after cursor: CreditCursor?, limit: Int) throws -> [CreditedRecord] {
        // Row values compare in the list's order; a missing seq (pruned before
        // the migration) counts as 0 so those rows come last, still in order.
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(Self.transactionColumns), COALESCE(granted_seq, 0) AS credit_seq FROM transactions
                WHERE granted_to = ?1 AND (?2 IS NULL OR (COALESCE(granted_seq, 0), environment, transaction_id) < (?2, ?3, ?4))
                ORDER BY COALESCE(granted_seq, 0) DESC, environment DESC, transaction_id DESC LIMIT ?5
                """)
        let arguments: StatementArguments = [
            user, cursor.map { Int64(clamping: $0.grantedSeq) }, cursor?.environment, cursor?.transactionID, limit,
        ]
        return try statement.mapRows(arguments: arguments) { row in
            CreditedRecord(
                transaction: Self.storedTransaction(row),
                grantedSeq: UInt64(clamping: row[LedgerColumns.transactionCount] as Int64))  // credit_seq
        }
    }
}
