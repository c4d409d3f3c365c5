/// The tables of the ledger's App Store Server API work (never edited once
/// shipped), one SQL text per store:
/// - `catchup_cursor`: per environment, how far Apple's notification history
///   has been applied, and which ledger is catching up (a lease);
/// - `consumption_requests`: consumption information to send to Apple,
///   written with the CONSUMPTION_REQUEST that asked for it;
/// - `subscriptions_refresh_unknown`: the refresh sweep's index for
///   subscriptions whose auto-renew status Apple never stated (StoreKit 2
///   purchases with no renewal info), refreshed through the Server API.
enum ServerAPIMigration {
    static let name = "v5-server-api"

    static let sqlite = """
        CREATE TABLE catchup_cursor (
            environment TEXT PRIMARY KEY,
            applied_until_ms INTEGER,
            lease_holder TEXT,
            lease_until_ms INTEGER,
            updated_at_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE consumption_requests (
            environment TEXT NOT NULL,
            transaction_id TEXT NOT NULL,
            request BLOB NOT NULL,
            requested_at_ms INTEGER NOT NULL,
            next_attempt_at_ms INTEGER NOT NULL,
            attempts INTEGER NOT NULL,
            PRIMARY KEY (environment, transaction_id)
        ) WITHOUT ROWID;
        CREATE INDEX consumption_requests_due ON consumption_requests (next_attempt_at_ms);
        CREATE INDEX subscriptions_refresh_unknown ON subscriptions (expires_date_ms)
            WHERE revoked_at_ms IS NULL AND auto_renew IS NULL;
        """

    static let postgres = """
        CREATE TABLE catchup_cursor (
            environment TEXT PRIMARY KEY,
            applied_until_ms BIGINT,
            lease_holder TEXT,
            lease_until_ms BIGINT,
            updated_at_ms BIGINT NOT NULL
        );
        CREATE TABLE consumption_requests (
            environment TEXT NOT NULL,
            transaction_id TEXT NOT NULL,
            request BYTEA NOT NULL,
            requested_at_ms BIGINT NOT NULL,
            next_attempt_at_ms BIGINT NOT NULL,
            attempts INTEGER NOT NULL,
            PRIMARY KEY (environment, transaction_id)
        );
        CREATE INDEX consumption_requests_due ON consumption_requests (next_attempt_at_ms);
        CREATE INDEX subscriptions_refresh_unknown ON subscriptions (expires_date_ms)
            WHERE revoked_at_ms IS NULL AND auto_renew IS NULL;
        """
}
