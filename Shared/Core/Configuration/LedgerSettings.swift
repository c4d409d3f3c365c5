/// What happens when a purchase already bound to one user is presented by another.
public enum BindingPolicy: String, CaseIterable, Sendable {
    /// The purchase moves to the new user (a restore on another account); the move is recorded.
    case transfer
    /// The purchase stays; the new user gets `409 already_bound`.
    case keep
}

/// The ledger's storage and rules.
public struct LedgerSettings: Sendable {
    /// `STOREKEEPER_DATA_DIR`: holds the SQLite database.
    public var dataDirectory: String
    /// `STOREKEEPER_BINDING_POLICY`.
    public var bindingPolicy: BindingPolicy
    /// `STOREKEEPER_EVENT_RETENTION_HOURS`: events older than this leave the replay log
    /// (default 7 days, longer than Apple's 6.5-day notification retry window).
    public var eventRetention: Duration
    /// `STOREKEEPER_REFRESH_PER_MINUTE`: re-verifications of lapsed auto-renewing subscriptions (0: off).
    public var refreshPerMinute: Int
    /// `STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS`: how often expiries and due refreshes are looked for.
    public var sweepInterval: Duration
    /// `STOREKEEPER_CATALOG`: the product catalog's file, read by the ledger at start; nil when unset.
    public var catalogPath: String?
    /// `STOREKEEPER_DATABASE_URL`: the ledger on PostgreSQL; nil for SQLite in `dataDirectory`.
    public var databaseURL: DatabaseURL?
    /// `STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS`: how often Apple's notification history is
    /// pulled and what was missed applied (through the verifiers' App Store Server API); nil: never.
    public var notificationCatchUp: Duration?
    /// `STOREKEEPER_SEND_CONSUMPTION_INFO`: answer CONSUMPTION_REQUEST notifications with
    /// Send Consumption Information (the operator states its customers consented).
    public var sendConsumptionInfo: Bool

    public init(reader: EnvironmentReader) throws(ConfigurationError) {
        dataDirectory = reader.string(.dataDirectory)
        bindingPolicy = try reader.choice(.bindingPolicy)
        let hours = try reader.integer(.eventRetentionHours, in: 1...24 * 366)
        eventRetention = .seconds(hours * 3_600)
        refreshPerMinute = try reader.integer(.refreshPerMinute, in: 0...100_000)
        sweepInterval = try reader.milliseconds(.ledgerSweepInterval, in: 10...3_600_000)
        catalogPath = reader.raw(.catalog)
        databaseURL = try reader.raw(.databaseURL).map { text throws(ConfigurationError) in try DatabaseURL(parsing: text) }
        let catchUp = try reader.integer(.notificationCatchUpSeconds, in: 0...86_400)
        notificationCatchUp = catchUp > 0 ? .seconds(catchUp) : nil
        sendConsumptionInfo = try reader.boolean(.sendConsumptionInfo)
    }
}
