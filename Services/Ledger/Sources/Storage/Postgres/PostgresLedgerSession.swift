import Contracts
import Foundation
import PostgresNIO

/// The reads of `LedgerReader` over one PostgreSQL connection inside a
/// transaction: the SQL of `SQLiteLedgerSession`, with PostgreSQL's types.
/// Snapshot reads use it as it is; a group commit reads through it what its
/// prefetch did not load, and writes with `write` (+Flush).
final class PostgresLedgerSession: LedgerReader {
    let db: BlockingPostgresConnection

    init(db: BlockingPostgresConnection) {
        self.db = db
    }

    // MARK: Transactions

    private static let transactionColumns = LedgerColumns.transaction
    private static let joinedTransactionColumns = LedgerColumns.joinedTransaction

    func transaction(_ key: TransactionKey) throws -> StoredTransaction? {
        try db.query(
            "SELECT \(Self.transactionColumns) FROM transactions WHERE environment = $1 AND transaction_id = $2",
            [.text(StoredEnvironment.name(key.environment)), .text(key.transactionID)]
        ).rows.first.map(Self.storedTransaction)
    }

    func transactions(of subscription: SubscriptionKey) throws -> [StoredTransaction] {
        try db.query(
            """
            SELECT \(Self.transactionColumns) FROM transactions
            WHERE environment = $1 AND original_transaction_id = $2 ORDER BY purchase_date_ms, transaction_id
            """,
            [.text(StoredEnvironment.name(subscription.environment)), .text(subscription.originalTransactionID)]
        ).rows.map(Self.storedTransaction)
    }

    static func storedTransaction(_ row: PostgresRow) throws -> StoredTransaction {
        let row = row.makeRandomAccess()
        return StoredTransaction(
            key: TransactionKey(StoredEnvironment.environment(try row.string(0)), try row.string(1)),
            originalTransactionID: try row.string(2), productID: try row.string(3),
            quantity: Int32(truncatingIfNeeded: try row.int(4)), purchaseDateMs: try row.int(5),
            expiresDateMs: try row.optionalInt(6), cancellationDateMs: try row.optionalInt(7),
            cancellationReason: try row.optionalInt(8).map { Int32(truncatingIfNeeded: $0) }, isUpgraded: try row.bool(9),
            grantedTo: try row.optionalString(10), grantedAtMs: try row.optionalInt(11), reinstatedAtMs: try row.optionalInt(12),
            kind: try row.optionalString(13).flatMap(ProductCatalog.kind(named:)), priceMilliunits: try row.optionalInt(14),
            currency: try row.optionalString(15))
    }

    func oneOffPurchases(ownedBy user: String, listedProducts: [String]) throws -> [StoredTransaction] {
        try db.query(
            """
            SELECT \(Self.joinedTransactionColumns) FROM bindings b
            JOIN transactions t ON t.environment = b.environment AND t.original_transaction_id = b.original_transaction_id
            WHERE b.user_id = $1 AND t.expires_date_ms IS NULL
                AND (t.kind IN ('non_consumable', 'non_renewing') OR (t.kind IS NULL AND t.product_id = ANY($2)))
            ORDER BY t.original_transaction_id, t.environment, t.purchase_date_ms, t.transaction_id
            """, [.text(user), .texts(listedProducts)]
        ).rows.map(Self.storedTransaction)
    }

    // MARK: Bindings

    func owner(of subscription: SubscriptionKey) throws -> String? {
        try db.query(
            "SELECT user_id FROM bindings WHERE environment = $1 AND original_transaction_id = $2",
            [.text(StoredEnvironment.name(subscription.environment)), .text(subscription.originalTransactionID)]
        ).rows.first.map { try $0.makeRandomAccess().string(0) }
    }

    // MARK: Subscriptions

    private static let subscriptionColumns = LedgerColumns.subscription

    func subscription(_ key: SubscriptionKey) throws -> SubscriptionRecord? {
        try db.query(
            "SELECT \(Self.subscriptionColumns) FROM subscriptions s WHERE environment = $1 AND original_transaction_id = $2",
            [.text(StoredEnvironment.name(key.environment)), .text(key.originalTransactionID)]
        ).rows.first.map { try Self.subscriptionRecord($0.makeRandomAccess()) }
    }

    func subscriptions(ownedBy user: String) throws -> [SubscriptionRecord] {
        try db.query(
            """
            SELECT \(Self.subscriptionColumns) FROM bindings b
            JOIN subscriptions s ON s.environment = b.environment AND s.original_transaction_id = b.original_transaction_id
            WHERE b.user_id = $1 ORDER BY s.original_transaction_id, s.environment
            """, [.text(user)]
        ).rows.map { try Self.subscriptionRecord($0.makeRandomAccess()) }
    }

    func subscriptionsDueForRefresh(now: Int64, limit: Int, withoutReceipt: Bool) throws -> [OwnedSubscription] {
        let due = "s.expires_date_ms <= $1 AND (s.next_refresh_at_ms IS NULL OR s.next_refresh_at_ms <= $1)"
        let renewing = try ownedSubscriptions(
            where: """
                s.revoked_at_ms IS NULL AND s.auto_renew AND \(withoutReceipt ? "TRUE" : "s.latest_receipt <> ''") AND \(due)
                """, now: now, limit: limit)
        guard withoutReceipt else { return renewing }
        // Two statements, each served by its partial index (as on SQLite).
        let unstated = try ownedSubscriptions(
            where: "s.revoked_at_ms IS NULL AND s.auto_renew IS NULL AND s.latest_receipt = '' AND \(due)", now: now,
            limit: limit)
        return OwnedSubscription.soonestFirst(renewing + unstated, limit: limit)
    }

    func subscriptionsNewlyExpired(now: Int64, limit: Int) throws -> [OwnedSubscription] {
        try ownedSubscriptions(
            where: """
                s.revoked_at_ms IS NULL AND (s.expired_event_for_ms IS NULL OR s.expired_event_for_ms < s.expires_date_ms)
                AND s.expires_date_ms <= $1 AND (s.grace_expires_date_ms IS NULL OR s.grace_expires_date_ms <= $1)
                """, now: now, limit: limit)
    }

    private func ownedSubscriptions(where condition: String, now: Int64, limit: Int) throws -> [OwnedSubscription] {
        try db.query(
            """
            SELECT \(Self.subscriptionColumns), b.user_id FROM subscriptions s
            LEFT JOIN bindings b ON b.environment = s.environment AND b.original_transaction_id = s.original_transaction_id
            WHERE \(condition) ORDER BY s.expires_date_ms, s.environment, s.original_transaction_id LIMIT $2
            """, [.int(now), .int(Int64(limit))]
        ).rows.map { row in
            let row = row.makeRandomAccess()
            return OwnedSubscription(owner: try row.optionalString(17), subscription: try Self.subscriptionRecord(row))
        }
    }

    static func subscriptionRecord(_ row: PostgresRandomAccessRow) throws -> SubscriptionRecord {
        var s = SubscriptionRecord(key: SubscriptionKey(StoredEnvironment.environment(try row.string(0)), try row.string(1)))
        s.productID = try row.string(2)
        s.expiresDateMs = try row.optionalInt(3)
        s.revokedAtMs = try row.optionalInt(4)
        s.autoRenew = try row.optionalBool(5)
        s.autoRenewProductID = try row.string(6)
        s.expirationIntent = try row.optionalInt(7).map { Int32(truncatingIfNeeded: $0) }
        s.billingRetry = try row.bool(8)
        s.graceExpiresDateMs = try row.optionalInt(9)
        s.priceConsentStatus = try row.optionalInt(10).map { Int32(truncatingIfNeeded: $0) }
        s.renewalInfoAtMs = try row.int(11)
        s.latestReceipt = try row.string(12)
        s.expiredEventForMs = try row.optionalInt(13)
        s.nextRefreshAtMs = try row.optionalInt(14)
        s.refreshAttempts = Int32(truncatingIfNeeded: try row.int(15))
        s.updatedAtMs = try row.int(16)
        return s
    }

    // MARK: Events

    func events(after seq: UInt64, limit: Int) throws -> [LedgerEvent] {
        try db.query(
            "SELECT seq, event FROM events WHERE seq > $1 ORDER BY seq LIMIT $2",
            [.int(Int64(clamping: seq)), .int(Int64(limit))]
        ).rows.map { row in
            let row = row.makeRandomAccess()
            // Stored before it was numbered: the row's seq is the event's.
            var event = try LedgerEvent(serializedBytes: try row.bytes(1))
            event.seq = UInt64(try row.int(0))
            return event
        }
    }

    func headSeq() throws -> UInt64 {
        UInt64(try db.query("SELECT COALESCE(MAX(seq), 0) FROM events").rows.first?.makeRandomAccess().int(0) ?? 0)
    }

    func oldestRetainedSeq() throws -> UInt64 {
        if let oldest = try db.query("SELECT MIN(seq) FROM events").rows.first?.makeRandomAccess().optionalInt(0) {
            return UInt64(oldest)
        }
        return try headSeq() + 1
    }

    func pruneEvents(before cutoff: Int64) throws -> Int {
        try db.execute(
            """
            DELETE FROM events WHERE occurred_at_ms < $1 AND seq IS NOT NULL
                AND seq < (SELECT MAX(seq) FROM events)
            """, [.int(cutoff)])
    }

    // MARK: Idempotent answers and the transaction list

    func idempotentAnswer(scope: String, key: String) throws -> StoredIdempotentAnswer? {
        try db.query(
            """
            SELECT request_sha256, outcome, created_at_ms FROM idempotency_keys
            WHERE scope = $1 AND idempotency_key = $2
            """, [.text(scope), .text(key)]
        ).rows.first.map { row in
            let row = row.makeRandomAccess()
            return StoredIdempotentAnswer(
                scope: scope, key: key, requestSHA256: try row.string(0), outcome: try row.bytes(1),
                createdAtMs: try row.int(2))
        }
    }

    func pruneIdempotentAnswers(before cutoff: Int64) throws -> Int {
        try db.execute("DELETE FROM idempotency_keys WHERE created_at_ms < $1", [.int(cutoff)])
    }

    func creditedTransactions(of user: String, after cursor: CreditCursor?, limit: Int) throws -> [CreditedRecord] {
        try db.query(
            """
            SELECT \(Self.transactionColumns), COALESCE(granted_seq, 0) FROM transactions
            WHERE granted_to = $1
                AND ($2::bigint IS NULL OR (COALESCE(granted_seq, 0), environment, transaction_id) < ($2, $3, $4))
            ORDER BY COALESCE(granted_seq, 0) DESC, environment DESC, transaction_id DESC LIMIT $5
            """,
            [
                .text(user), .int(cursor.map { Int64(clamping: $0.grantedSeq) }), .text(cursor?.environment),
                .text(cursor?.transactionID), .int(Int64(limit)),
            ]
        ).rows.map { row in
            CreditedRecord(
                transaction: try Self.storedTransaction(row),
                grantedSeq: UInt64(clamping: try row.makeRandomAccess().int(LedgerColumns.transactionCount)))
        }
    }
}
