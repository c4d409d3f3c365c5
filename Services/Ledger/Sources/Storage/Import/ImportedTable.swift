import Contracts

/// A ledger table as `storekeeper db import` moves it: its columns in one
/// canonical order (SQLite's, every column both schemas share), their kinds,
/// and the key rows are ordered, deduplicated and compared by.
struct ImportedTable: Sendable {
    enum Kind: Sendable {
        case text, integer, boolean, bytes
    }

    struct Column: Sendable {
        let name: String
        let kind: Kind
    }

    /// Columns only PostgreSQL has, derived from the row being imported.
    struct DerivedColumns: Sendable {
        let names: [String]
        let values: @Sendable (_ row: [ImportValue]) -> [PostgresBind]
    }

    let name: String
    let columns: [Column]
    /// The primary key: a natural key, or binding_history's surrogate `id` and
    /// the events' `seq`, both kept as they are (subscribers resume after a seq).
    let key: [String]
    /// Positions of the key's columns in `columns`.
    let keyIndexes: [Int]
    let derived: DerivedColumns?

    init(_ name: String, _ columns: [(String, Kind)], key: [String], derived: DerivedColumns? = nil) {
        self.name = name
        self.columns = columns.map { Column(name: $0.0, kind: $0.1) }
        self.key = key
        keyIndexes = key.compactMap { name in columns.firstIndex { $0.0 == name } }
        precondition(keyIndexes.count == key.count, "\(name): a key column is not among its columns")
        self.derived = derived
    }

    var columnList: String { columns.map(\.name).joined(separator: ", ") }

    /// Every table the ledger keeps on both SQLite and PostgreSQL (not the
    /// migration bookkeeping: `grdb_migrations`, `schema_migrations`).
    static let all: [ImportedTable] = [
        ImportedTable(
            "transactions",
            [
                ("environment", .text), ("transaction_id", .text), ("original_transaction_id", .text), ("product_id", .text),
                ("quantity", .integer), ("purchase_date_ms", .integer), ("expires_date_ms", .integer),
                ("cancellation_date_ms", .integer), ("cancellation_reason", .integer), ("is_upgraded", .boolean),
                ("granted_to", .text), ("granted_at_ms", .integer), ("reinstated_at_ms", .integer), ("kind", .text),
                ("price_milliunits", .integer), ("currency", .text),
                ("granted_seq", .integer),
            ], key: ["environment", "transaction_id"]),
        ImportedTable(
            "bindings",
            [("environment", .text), ("original_transaction_id", .text), ("user_id", .text), ("bound_at_ms", .integer)],
            key: ["environment", "original_transaction_id"]),
        ImportedTable(
            "binding_history",
            [
                ("id", .integer), ("environment", .text), ("original_transaction_id", .text), ("from_user_id", .text),
                ("to_user_id", .text), ("at_ms", .integer), ("request_id", .text),
            ], key: ["id"]),
        ImportedTable(
            "subscriptions",
            [
                ("environment", .text), ("original_transaction_id", .text), ("product_id", .text),
                ("expires_date_ms", .integer), ("revoked_at_ms", .integer), ("auto_renew", .boolean),
                ("auto_renew_product_id", .text), ("expiration_intent", .integer), ("billing_retry", .boolean),
                ("grace_expires_date_ms", .integer), ("price_consent_status", .integer), ("renewal_info_at_ms", .integer),
                ("latest_receipt", .text), ("expired_event_for_ms", .integer), ("next_refresh_at_ms", .integer),
                ("refresh_attempts", .integer), ("updated_at_ms", .integer),
            ], key: ["environment", "original_transaction_id"]),
        ImportedTable(
            "notifications",
            [
                ("notification_id", .text), ("notification_type", .text), ("environment", .text),
                ("original_transaction_id", .text), ("received_at_ms", .integer),
            ], key: ["notification_id"]),
        ImportedTable(
            "idempotency_keys",
            [
                ("scope", .text), ("idempotency_key", .text), ("request_sha256", .text), ("outcome", .bytes),
                ("created_at_ms", .integer),
            ], key: ["scope", "idempotency_key"]),
        ImportedTable(
            "catchup_cursor",
            [
                ("environment", .text), ("applied_until_ms", .integer), ("lease_holder", .text), ("lease_until_ms", .integer),
                ("updated_at_ms", .integer),
            ], key: ["environment"]),
        ImportedTable(
            "consumption_requests",
            [
                ("environment", .text), ("transaction_id", .text), ("request", .bytes), ("requested_at_ms", .integer),
                ("next_attempt_at_ms", .integer), ("attempts", .integer),
            ], key: ["environment", "transaction_id"]),
        ImportedTable(
            "events", [("seq", .integer), ("topic", .text), ("occurred_at_ms", .integer), ("event", .bytes)], key: ["seq"],
            derived: DerivedColumns(names: ["granted_environment", "granted_transaction_id"], values: grantedTransaction)),
    ]

    /// The transaction a `transaction.granted` event credits, as PostgreSQL's
    /// writers name it on the row (`PostgresLedgerSession.append`). Only the
    /// sequencer reads these, for rows it numbers; imported rows come numbered,
    /// so an event that does not decode keeps NULLs and its bytes unchanged.
    private static func grantedTransaction(_ row: [ImportValue]) -> [PostgresBind] {
        guard case .bytes(let bytes) = row[3], let event = try? LedgerEvent(serializedBytes: bytes),
            case .transactionGranted(let granted) = event.payload
        else { return [.text(nil), .text(nil)] }
        return [.text(StoredEnvironment.name(event.environment)), .text(granted.grant.transactionID)]
    }
}
