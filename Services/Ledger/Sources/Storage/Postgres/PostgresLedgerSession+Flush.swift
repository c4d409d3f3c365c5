import Contracts
import PostgresNIO

/// A group's writes, one multi-row statement per table (`unnest` of one array
/// per column), in the order the rules' invariants need nothing of: every row
/// is written in its final state.
extension PostgresLedgerSession {
    /// Another ledger wrote a row this group believed absent (an insert that did
    /// nothing): the group must run again on fresh data.
    struct RowsChangedConcurrently: Error, CustomStringConvertible {
        let table: String
        var description: String { "rows of \(table) were written by another ledger during the commit" }
    }

    func write(_ pending: PostgresPendingWrites) throws {
        let rows = pending.transactions.values
        try insertTransactions(rows.filter(\.isNew).map(\.transaction))
        try updateTransactions(rows.filter { !$0.isNew }.map(\.transaction))
        try writeBindings(pending.bindings, moves: pending.moves)
        try writeSubscriptions(Array(pending.subscriptions.values))
        try insertNotifications(pending.notifications)
        try insertEvents(pending.events)
        try writeAnswers(Array(pending.answers.values))
    }

    /// The 16 columns of `LedgerColumns.transaction`, as arrays.
    private static func transactionColumns(_ rows: [StoredTransaction]) -> [PostgresBind] {
        [
            .texts(rows.map { StoredEnvironment.name($0.key.environment) }), .texts(rows.map(\.key.transactionID)),
            .texts(rows.map(\.originalTransactionID)), .texts(rows.map(\.productID)),
            .intColumn(rows.map { Int64($0.quantity) }), .intColumn(rows.map(\.purchaseDateMs)),
            .intColumn(rows.map(\.expiresDateMs)), .intColumn(rows.map(\.cancellationDateMs)),
            .intColumn(rows.map { $0.cancellationReason.map { Int64($0) } }), .boolColumn(rows.map(\.isUpgraded)),
            .textColumn(rows.map(\.grantedTo)), .intColumn(rows.map(\.grantedAtMs)), .intColumn(rows.map(\.reinstatedAtMs)),
            .textColumn(rows.map { $0.kind.flatMap(ProductCatalog.name(of:)) }), .intColumn(rows.map(\.priceMilliunits)),
            .textColumn(rows.map(\.currency)),
        ]
    }

    private static let transactionArrays = """
        unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::int8[], $7::int8[], $8::int8[],
            $9::int8[], $10::bool[], $11::text[], $12::int8[], $13::int8[], $14::text[], $15::int8[], $16::text[])
        """

    private func insertTransactions(_ rows: [StoredTransaction]) throws {
        guard !rows.isEmpty else { return }
        let inserted = try db.execute(
            """
            INSERT INTO transactions (\(LedgerColumns.transaction)) SELECT * FROM \(Self.transactionArrays)
            ON CONFLICT (environment, transaction_id) DO NOTHING
            """, Self.transactionColumns(rows))
        guard inserted == rows.count else { throw RowsChangedConcurrently(table: "transactions") }
    }

    private func updateTransactions(_ rows: [StoredTransaction]) throws {
        guard !rows.isEmpty else { return }
        try db.query(
            """
            UPDATE transactions t SET original_transaction_id = u.original_transaction_id, product_id = u.product_id,
                quantity = u.quantity, purchase_date_ms = u.purchase_date_ms, expires_date_ms = u.expires_date_ms,
                cancellation_date_ms = u.cancellation_date_ms, cancellation_reason = u.cancellation_reason,
                is_upgraded = u.is_upgraded, granted_to = u.granted_to, granted_at_ms = u.granted_at_ms,
                reinstated_at_ms = u.reinstated_at_ms, kind = u.kind, price_milliunits = u.price_milliunits,
                currency = u.currency
            FROM \(Self.transactionArrays) AS u(\(LedgerColumns.transaction))
            WHERE t.environment = u.environment AND t.transaction_id = u.transaction_id
            """, Self.transactionColumns(rows))
    }

    private func writeBindings(
        _ bindings: [SubscriptionKey: PostgresPendingWrites.Binding], moves: [PostgresPendingWrites.Move]
    ) throws {
        if !bindings.isEmpty {
            let keys = Array(bindings.keys)
            try db.query(
                """
                INSERT INTO bindings (environment, original_transaction_id, user_id, bound_at_ms)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[])
                ON CONFLICT (environment, original_transaction_id) DO UPDATE SET user_id = excluded.user_id,
                    bound_at_ms = excluded.bound_at_ms
                """,
                Self.keyColumns(keys) + [.texts(keys.map { bindings[$0]!.user }), .intColumn(keys.map { bindings[$0]!.atMs })])
        }
        guard !moves.isEmpty else { return }
        try db.query(
            """
            INSERT INTO binding_history (environment, original_transaction_id, from_user_id, to_user_id, at_ms, request_id)
            SELECT e, o, f, t, a, r FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[])
                WITH ORDINALITY AS m(e, o, f, t, a, r, n) ORDER BY n
            """,
            Self.keyColumns(moves.map(\.subscription)) + [
                .texts(moves.map(\.from)), .texts(moves.map(\.to)), .intColumn(moves.map(\.atMs)),
                .texts(moves.map(\.requestID)),
            ])
    }

    private func writeSubscriptions(_ rows: [SubscriptionRecord]) throws {
        guard !rows.isEmpty else { return }
        try db.query(
            """
            INSERT INTO subscriptions (
                environment, original_transaction_id, product_id, expires_date_ms, revoked_at_ms, auto_renew,
                auto_renew_product_id, expiration_intent, billing_retry, grace_expires_date_ms, price_consent_status,
                renewal_info_at_ms, latest_receipt, expired_event_for_ms, next_refresh_at_ms, refresh_attempts,
                updated_at_ms)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::int8[], $6::bool[], $7::text[],
                $8::int8[], $9::bool[], $10::int8[], $11::int8[], $12::int8[], $13::text[], $14::int8[], $15::int8[],
                $16::int8[], $17::int8[])
            ON CONFLICT (environment, original_transaction_id) DO UPDATE SET product_id = excluded.product_id,
                expires_date_ms = excluded.expires_date_ms, revoked_at_ms = excluded.revoked_at_ms,
                auto_renew = excluded.auto_renew, auto_renew_product_id = excluded.auto_renew_product_id,
                expiration_intent = excluded.expiration_intent, billing_retry = excluded.billing_retry,
                grace_expires_date_ms = excluded.grace_expires_date_ms,
                price_consent_status = excluded.price_consent_status, renewal_info_at_ms = excluded.renewal_info_at_ms,
                latest_receipt = excluded.latest_receipt, expired_event_for_ms = excluded.expired_event_for_ms,
                next_refresh_at_ms = excluded.next_refresh_at_ms, refresh_attempts = excluded.refresh_attempts,
                updated_at_ms = excluded.updated_at_ms
            """,
            Self.keyColumns(rows.map(\.key)) + [
                .texts(rows.map(\.productID)), .intColumn(rows.map(\.expiresDateMs)), .intColumn(rows.map(\.revokedAtMs)),
                .boolColumn(rows.map(\.autoRenew)), .texts(rows.map(\.autoRenewProductID)),
                .intColumn(rows.map { $0.expirationIntent.map { Int64($0) } }), .boolColumn(rows.map(\.billingRetry)),
                .intColumn(rows.map(\.graceExpiresDateMs)), .intColumn(rows.map { $0.priceConsentStatus.map { Int64($0) } }),
                .intColumn(rows.map(\.renewalInfoAtMs)), .texts(rows.map(\.latestReceipt)),
                .intColumn(rows.map(\.expiredEventForMs)), .intColumn(rows.map(\.nextRefreshAtMs)),
                .intColumn(rows.map { Int64($0.refreshAttempts) }), .intColumn(rows.map(\.updatedAtMs)),
            ])
    }

    private func insertNotifications(_ notifications: [String: PostgresPendingWrites.Notification]) throws {
        guard !notifications.isEmpty else { return }
        let ids = Array(notifications.keys)
        let rows = ids.map { notifications[$0]! }
        let inserted = try db.execute(
            """
            INSERT INTO notifications (notification_id, notification_type, environment, original_transaction_id, received_at_ms)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[])
            ON CONFLICT (notification_id) DO NOTHING
            """,
            [.texts(ids), .texts(rows.map(\.type))] + Self.keyColumns(rows.map(\.subscription))
                + [.intColumn(rows.map(\.atMs))])
        guard inserted == ids.count else { throw RowsChangedConcurrently(table: "notifications") }
    }

    /// In the order the rules appended them: the sequencer numbers rows by id.
    private func insertEvents(_ events: [LedgerEvent]) throws {
        guard !events.isEmpty else { return }
        let granted = events.map { event -> TransactionKey? in
            guard case .transactionGranted(let payload) = event.payload else { return nil }
            return TransactionKey(event.environment, payload.grant.transactionID)
        }
        try db.query(
            """
            INSERT INTO events (topic, occurred_at_ms, event, granted_environment, granted_transaction_id)
            SELECT t, o, e, g, i FROM unnest($1::text[], $2::int8[], $3::bytea[], $4::text[], $5::text[])
                WITH ORDINALITY AS u(t, o, e, g, i, n) ORDER BY n
            """,
            [
                .texts(events.map(\.topic)), .intColumn(events.map(\.occurredAtMs)),
                .bytesColumn(try events.map { try $0.serializedBytes() }),
                .textColumn(granted.map { $0.map { StoredEnvironment.name($0.environment) } }),
                .textColumn(granted.map { $0?.transactionID }),
            ])
    }

    private func writeAnswers(_ answers: [StoredIdempotentAnswer]) throws {
        guard !answers.isEmpty else { return }
        try db.query(
            """
            INSERT INTO idempotency_keys (scope, idempotency_key, request_sha256, outcome, created_at_ms)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::int8[])
            ON CONFLICT (scope, idempotency_key) DO UPDATE SET request_sha256 = excluded.request_sha256,
                outcome = excluded.outcome, created_at_ms = excluded.created_at_ms
            """,
            [
                .texts(answers.map(\.scope)), .texts(answers.map(\.key)), .texts(answers.map(\.requestSHA256)),
                .bytesColumn(answers.map(\.outcome)), .intColumn(answers.map(\.createdAtMs)),
            ])
    }
}
