import Logging

/// The ledger's tables on PostgreSQL: the same rows as on SQLite
/// (docs/ledger.md), with two differences for several writers:
/// - `events.seq` is NULL when a writer commits; the one sequencer
///   (`EventSequencer`) numbers rows in the order it sees them committed, so
///   `seq` is gapless and a reader never skips a row committed late;
/// - the granted transaction is named on its event row, so the sequencer can
///   give the transaction its `granted_seq`.
///
/// Migrations are numbered, never edited once shipped, each applied in its own
/// transaction and recorded in `schema_migrations`; `migrate` holds an
/// advisory lock, so ledgers starting together apply each exactly once.
enum PostgresSchema {
    /// Key of the advisory lock held while migrating.
    static let migrationLock: Int64 = 0x5354_4B50_4D49_4752  // "STKPMIGR"

    static let migrations: [(version: Int, name: String, sql: String)] = [
        (1, "ledger", v1), (2, "server-api", ServerAPIMigration.postgres),
        (3, "transaction-prices", TransactionPriceMigration.postgres),
    ]

    /// Applies every migration not yet applied; returns the names applied now.
    @discardableResult
    static func migrate(_ db: BlockingPostgresConnection, logger: Logger) throws -> [String] {
        try db.query("SELECT pg_advisory_lock($1)", [.int(migrationLock)])
        defer { _ = try? db.query("SELECT pg_advisory_unlock($1)", [.int(migrationLock)]) }
        try db.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
            """)
        let applied = Set(
            try db.query("SELECT version FROM schema_migrations").rows.map { Int(try $0.makeRandomAccess().int(0)) })
        var appliedNow: [String] = []
        for migration in migrations where !applied.contains(migration.version) {
            try db.query("BEGIN")
            do {
                try db.run(script: migration.sql)
                try db.query(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    [.int(Int64(migration.version)), .text(migration.name)])
                try db.query("COMMIT")
            } catch {
                _ = try? db.query("ROLLBACK")
                throw error
            }
            logger.info("schema migration applied", metadata: ["ledger.migration": "\(migration.version)-\(migration.name)"])
            appliedNow.append("\(migration.version)-\(migration.name)")
        }
        return appliedNow
    }

    /// The schema SQLite reached with its migrations v1 to v4, in one step.
    private static let v1 = """
        CREATE TABLE transactions (
            environment TEXT NOT NULL,
            transaction_id TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            product_id TEXT NOT NULL,
            quantity INTEGER NOT NULL,
            purchase_date_ms BIGINT NOT NULL,
            expires_date_ms BIGINT,
            cancellation_date_ms BIGINT,
            cancellation_reason INTEGER,
            is_upgraded BOOLEAN NOT NULL,
            granted_to TEXT,
            granted_at_ms BIGINT,
            reinstated_at_ms BIGINT,
            kind TEXT,
            granted_seq BIGINT,
            PRIMARY KEY (environment, transaction_id)
        );
        CREATE INDEX transactions_by_original
            ON transactions (environment, original_transaction_id, purchase_date_ms, transaction_id);
        CREATE INDEX transactions_credited ON transactions (granted_to, granted_seq DESC, environment, transaction_id)
            WHERE granted_to IS NOT NULL;

        CREATE TABLE bindings (
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            bound_at_ms BIGINT NOT NULL,
            PRIMARY KEY (environment, original_transaction_id)
        );
        CREATE INDEX bindings_by_user ON bindings (user_id);
        CREATE TABLE binding_history (
            id BIGSERIAL PRIMARY KEY,
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            from_user_id TEXT,
            to_user_id TEXT NOT NULL,
            at_ms BIGINT NOT NULL,
            request_id TEXT NOT NULL
        );

        CREATE TABLE subscriptions (
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            product_id TEXT NOT NULL,
            expires_date_ms BIGINT,
            revoked_at_ms BIGINT,
            auto_renew BOOLEAN,
            auto_renew_product_id TEXT NOT NULL,
            expiration_intent INTEGER,
            billing_retry BOOLEAN NOT NULL,
            grace_expires_date_ms BIGINT,
            price_consent_status INTEGER,
            renewal_info_at_ms BIGINT NOT NULL,
            latest_receipt TEXT NOT NULL,
            expired_event_for_ms BIGINT,
            next_refresh_at_ms BIGINT,
            refresh_attempts INTEGER NOT NULL,
            updated_at_ms BIGINT NOT NULL,
            PRIMARY KEY (environment, original_transaction_id)
        );
        CREATE INDEX subscriptions_refresh_due ON subscriptions (expires_date_ms)
            WHERE revoked_at_ms IS NULL AND auto_renew;
        CREATE INDEX subscriptions_expiry_pending ON subscriptions (expires_date_ms)
            WHERE revoked_at_ms IS NULL AND (expired_event_for_ms IS NULL OR expired_event_for_ms < expires_date_ms);

        CREATE TABLE notifications (
            notification_id TEXT PRIMARY KEY,
            notification_type TEXT NOT NULL,
            environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL,
            received_at_ms BIGINT NOT NULL
        );

        -- The outbox. id orders rows within a writer; seq is given by the sequencer.
        CREATE TABLE events (
            id BIGSERIAL PRIMARY KEY,
            seq BIGINT UNIQUE,
            topic TEXT NOT NULL,
            occurred_at_ms BIGINT NOT NULL,
            event BYTEA NOT NULL,
            granted_environment TEXT,
            granted_transaction_id TEXT
        );
        CREATE INDEX events_unnumbered ON events (id) WHERE seq IS NULL;
        CREATE INDEX events_by_time ON events (occurred_at_ms);

        CREATE TABLE idempotency_keys (
            scope TEXT NOT NULL,
            idempotency_key TEXT NOT NULL,
            request_sha256 TEXT NOT NULL,
            outcome BYTEA NOT NULL,
            created_at_ms BIGINT NOT NULL,
            PRIMARY KEY (scope, idempotency_key)
        );
        CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at_ms);
        """
}
