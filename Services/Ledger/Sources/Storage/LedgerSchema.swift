import GRDB

/// The ledger's tables (documented in docs/ledger.md). Migrations are SQL and
/// are never edited once shipped: a change is a new migration.
enum LedgerSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Every transaction ever seen; the primary key is the dedup rule: a
            // transaction is credited at most once, across all users.
            try db.execute(
                sql: """
                    CREATE TABLE transactions (
                        environment TEXT NOT NULL,
                        transaction_id TEXT NOT NULL,
                        original_transaction_id TEXT NOT NULL,
                        product_id TEXT NOT NULL,
                        quantity INTEGER NOT NULL,
                        purchase_date_ms INTEGER NOT NULL,
                        expires_date_ms INTEGER,
                        cancellation_date_ms INTEGER,
                        cancellation_reason INTEGER,
                        is_upgraded INTEGER NOT NULL,
                        granted_to TEXT,
                        granted_at_ms INTEGER,
                        PRIMARY KEY (environment, transaction_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX transactions_by_original
                        ON transactions (environment, original_transaction_id, purchase_date_ms, transaction_id);

                    -- Which user each purchase belongs to (exactly one), and every move.
                    CREATE TABLE bindings (
                        environment TEXT NOT NULL,
                        original_transaction_id TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        bound_at_ms INTEGER NOT NULL,
                        PRIMARY KEY (environment, original_transaction_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX bindings_by_user ON bindings (user_id);
                    CREATE TABLE binding_history (
                        id INTEGER PRIMARY KEY,
                        environment TEXT NOT NULL,
                        original_transaction_id TEXT NOT NULL,
                        from_user_id TEXT,
                        to_user_id TEXT NOT NULL,
                        at_ms INTEGER NOT NULL,
                        request_id TEXT NOT NULL
                    );

                    -- One row per auto-renewable subscription.
                    CREATE TABLE subscriptions (
                        environment TEXT NOT NULL,
                        original_transaction_id TEXT NOT NULL,
                        product_id TEXT NOT NULL,
                        expires_date_ms INTEGER,
                        revoked_at_ms INTEGER,
                        auto_renew INTEGER,
                        auto_renew_product_id TEXT NOT NULL,
                        expiration_intent INTEGER,
                        billing_retry INTEGER NOT NULL,
                        grace_expires_date_ms INTEGER,
                        price_consent_status INTEGER,
                        renewal_info_at_ms INTEGER NOT NULL,
                        latest_receipt TEXT NOT NULL,
                        expired_event_for_ms INTEGER,
                        next_refresh_at_ms INTEGER,
                        refresh_attempts INTEGER NOT NULL,
                        updated_at_ms INTEGER NOT NULL,
                        PRIMARY KEY (environment, original_transaction_id)
                    ) WITHOUT ROWID;
                    -- Partial indexes: the periodic sweeps look only at the few rows that
                    -- still need something, not at every subscription that ever expired.
                    CREATE INDEX subscriptions_refresh_due ON subscriptions (expires_date_ms)
                        WHERE revoked_at_ms IS NULL AND auto_renew = 1;
                    CREATE INDEX subscriptions_expiry_pending ON subscriptions (expires_date_ms)
                        WHERE revoked_at_ms IS NULL AND (expired_event_for_ms IS NULL OR expired_event_for_ms < expires_date_ms);

                    -- Notifications applied, so a redelivery changes nothing.
                    CREATE TABLE notifications (
                        notification_id TEXT PRIMARY KEY,
                        notification_type TEXT NOT NULL,
                        environment TEXT NOT NULL,
                        original_transaction_id TEXT NOT NULL,
                        received_at_ms INTEGER NOT NULL
                    ) WITHOUT ROWID;

                    -- The transactional outbox: each event is written with the change it describes.
                    CREATE TABLE events (
                        seq INTEGER PRIMARY KEY,
                        topic TEXT NOT NULL,
                        occurred_at_ms INTEGER NOT NULL,
                        event BLOB NOT NULL
                    );
                    CREATE INDEX events_by_time ON events (occurred_at_ms);
                    """)
        }
        migrator.registerMigration("v2-idempotency-and-credits", migrate: IdempotencyAndCreditsMigration.migrate)
        migrator.registerMigration("v3-refund-reversals") { db in
            // When Apple reversed a refund (StoredTransaction.reinstatedAtMs).
            try db.execute(sql: "ALTER TABLE transactions ADD COLUMN reinstated_at_ms INTEGER")
        }
        migrator.registerMigration("v4-product-kind") { db in
            // StoreKit 2's type (auto_renewable, non_renewing, non_consumable, consumable); NULL when unknown.
            try db.execute(sql: "ALTER TABLE transactions ADD COLUMN kind TEXT")
        }
        migrator.registerMigration(ServerAPIMigration.name) { db in try db.execute(sql: ServerAPIMigration.sqlite) }
        migrator.registerMigration(TransactionPriceMigration.name) { db in
            try db.execute(sql: TransactionPriceMigration.sqlite)
        }
        migrator.registerMigration(LastingPurchasesMigration.name) { db in
            try db.execute(sql: LastingPurchasesMigration.sqlite)
        }
        migrator.registerMigration(UnclaimedTransactionsMigration.name) { db in
            try db.execute(sql: UnclaimedTransactionsMigration.sqlite)
        }
        migrator.registerMigration(EventsBySeqMigration.name) { db in try db.execute(sql: EventsBySeqMigration.sqlite) }
        return migrator
    }

    /// Migrations that only add or drop an index: a ledger without them holds every row and column
    /// the others give it, so `db import` takes it as it is (it opens the file read-only).
    static let indexOnlyMigrations: Set<String> = [
        LastingPurchasesMigration.name, UnclaimedTransactionsMigration.name, EventsBySeqMigration.name,
    ]
}
