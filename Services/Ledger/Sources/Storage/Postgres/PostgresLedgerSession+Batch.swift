import Contracts
import PostgresNIO

/// Reads of many rows at once, by lists of keys (`unnest` of two text arrays
/// joined on the primary key or an index), for `PostgresGroupSession`'s prefetch.
extension PostgresLedgerSession {
    static func keyColumns(_ keys: some Collection<SubscriptionKey>) -> [PostgresBind] {
        [.texts(keys.map { StoredEnvironment.name($0.environment) }), .texts(keys.map(\.originalTransactionID))]
    }

    /// The transactions named by `keys`, and every transaction of `purchases`: per environment, a
    /// probe of the primary key per id and of `transactions_by_original` per purchase. (One
    /// `transaction_id = ANY(...) OR original_transaction_id = ANY(...)` turned into a sequential
    /// scan of the whole table once a group named a thousand keys: 45 ms at 200,000 rows.) A row
    /// found both ways comes twice; the cache keeps one.
    func transactions(_ keys: some Collection<TransactionKey>, purchases: some Collection<SubscriptionKey>) throws
        -> [StoredTransaction]
    {
        var byEnvironment: [AppleEnvironment: (ids: [String], originals: [String])] = [:]
        for key in keys { byEnvironment[key.environment, default: ([], [])].ids.append(key.transactionID) }
        for key in purchases { byEnvironment[key.environment, default: ([], [])].originals.append(key.originalTransactionID) }
        return try byEnvironment.flatMap { environment, lists in
            try db.query(
                """
                SELECT \(LedgerColumns.joinedTransaction) FROM unnest($2::text[]) AS k(id)
                JOIN transactions t ON t.environment = $1 AND t.transaction_id = k.id
                UNION ALL
                SELECT \(LedgerColumns.joinedTransaction) FROM unnest($3::text[]) AS k(id)
                JOIN transactions t ON t.environment = $1 AND t.original_transaction_id = k.id
                """, [.text(StoredEnvironment.name(environment)), .texts(lists.ids), .texts(lists.originals)]
            ).rows.map(Self.storedTransaction)
        }
    }

    /// The users `purchases` are bound to.
    func owners(of purchases: some Collection<SubscriptionKey>) throws -> [(SubscriptionKey, user: String)] {
        guard !purchases.isEmpty else { return [] }
        return try db.query(
            """
            SELECT b.environment, b.original_transaction_id, b.user_id FROM unnest($1::text[], $2::text[]) AS k(environment, id)
            JOIN bindings b ON b.environment = k.environment AND b.original_transaction_id = k.id
            """, Self.keyColumns(purchases)
        ).rows.map { row in
            let row = row.makeRandomAccess()
            return (SubscriptionKey(StoredEnvironment.environment(try row.string(0)), try row.string(1)), try row.string(2))
        }
    }

    /// `subscriptions(ownedBy:)` of several users at once, with each row's user.
    func subscriptions(ownedBy users: some Collection<String>) throws -> [(SubscriptionRecord, user: String)] {
        guard !users.isEmpty else { return [] }
        return try db.query(
            """
            SELECT \(LedgerColumns.subscription), b.user_id FROM bindings b
            JOIN subscriptions s ON s.environment = b.environment AND s.original_transaction_id = b.original_transaction_id
            WHERE b.user_id = ANY($1)
            """, [.texts(Array(users))]
        ).rows.map { row in
            let row = row.makeRandomAccess()
            return (try Self.subscriptionRecord(row), try row.string(17))
        }
    }

    func subscriptions(_ keys: some Collection<SubscriptionKey>) throws -> [SubscriptionRecord] {
        guard !keys.isEmpty else { return [] }
        return try db.query(
            """
            SELECT \(LedgerColumns.subscription) FROM unnest($1::text[], $2::text[]) AS k(environment, id)
            JOIN subscriptions s ON s.environment = k.environment AND s.original_transaction_id = k.id
            """, Self.keyColumns(keys)
        ).rows.map { try Self.subscriptionRecord($0.makeRandomAccess()) }
    }

    /// `oneOffPurchases(ownedBy:listedProducts:)` of several users at once, with each row's user.
    func oneOffPurchases(ownedBy users: some Collection<String>, listedProducts: [String]) throws
        -> [(StoredTransaction, user: String)]
    {
        guard !users.isEmpty else { return [] }
        // From the users' bindings to their transactions, a probe per binding. As a plain join,
        // PostgreSQL estimated that almost no row passes the kind filter (consumables, of no kind,
        // are most rows) and scanned the whole table for them instead: 50-200 ms at 200,000 rows,
        // per group. The LATERAL subquery with OFFSET 0 cannot be turned into that plan.
        return try db.query(
            """
            SELECT \(LedgerColumns.joinedTransaction), b.user_id FROM bindings b
            CROSS JOIN LATERAL (
                SELECT * FROM transactions t
                WHERE t.environment = b.environment AND t.original_transaction_id = b.original_transaction_id
                    AND t.expires_date_ms IS NULL
                    AND (t.kind IN ('non_consumable', 'non_renewing') OR (t.kind IS NULL AND t.product_id = ANY($2)))
                OFFSET 0
            ) t
            WHERE b.user_id = ANY($1)
            """, [.texts(Array(users)), .texts(listedProducts)]
        ).rows.map { (try Self.storedTransaction($0), try $0.makeRandomAccess().string(LedgerColumns.transactionCount)) }
    }

    /// Which of `ids` were applied before.
    func appliedNotifications(_ ids: some Collection<String>) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(
            try db.query("SELECT notification_id FROM notifications WHERE notification_id = ANY($1)", [.texts(Array(ids))])
                .rows.map { try $0.makeRandomAccess().string(0) })
    }

    func idempotentAnswers(_ keys: some Collection<LedgerPrefetch.AnswerKey>) throws -> [StoredIdempotentAnswer] {
        guard !keys.isEmpty else { return [] }
        return try db.query(
            """
            SELECT a.scope, a.idempotency_key, a.request_sha256, a.outcome, a.created_at_ms
            FROM unnest($1::text[], $2::text[]) AS k(scope, key)
            JOIN idempotency_keys a ON a.scope = k.scope AND a.idempotency_key = k.key
            """, [.texts(keys.map(\.scope)), .texts(keys.map(\.key))]
        ).rows.map { row in
            let row = row.makeRandomAccess()
            return StoredIdempotentAnswer(
                scope: try row.string(0), key: try row.string(1), requestSHA256: try row.string(2), outcome: try row.bytes(3),
                createdAtMs: try row.int(4))
        }
    }
}
