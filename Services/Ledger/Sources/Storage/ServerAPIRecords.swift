import Contracts

/// Where the notification catch-up stands in one environment (`catchup_cursor`).
public struct CatchUpCursor: Equatable, Sendable {
    public var environment: AppleEnvironment
    /// Apple's notification history up to this time (ms) has been applied; nil before the first span.
    public var appliedUntilMs: Int64?
    /// The ledger catching up now, until `leaseUntilMs`; nil when none is.
    public var leaseHolder: String?
    public var leaseUntilMs: Int64?
    public var updatedAtMs: Int64
}

/// A span of notification history this ledger may catch up: the cursor it starts from.
public struct CatchUpClaim: Equatable, Sendable {
    public var appliedUntilMs: Int64?
}

/// Consumption information waiting to be sent to Apple (`consumption_requests`):
/// written with the CONSUMPTION_REQUEST notification that asked for it, removed once sent.
public struct PendingConsumption: Equatable, Sendable {
    public var key: TransactionKey
    public var request: ConsumptionInfoRequest
    public var requestedAtMs: Int64
    public var nextAttemptAtMs: Int64
    public var attempts: Int32
}

/// What one user's credited purchases in one environment cost, by currency
/// (StoreKit 2's prices; migration "v6-transaction-prices").
public struct LifetimeSpend: Equatable, Sendable {
    public struct Amounts: Equatable, Sendable {
        /// Every credited purchase, refunded ones included (Apple's "purchased").
        public var purchasedMilliunits: Int64
        /// The refunded ones.
        public var refundedMilliunits: Int64
    }

    /// By ISO 4217 currency code.
    public var byCurrency: [String: Amounts]
    /// Credited purchases whose price the ledger never learned (seen through verifyReceipt only).
    public var unpriced: Int

    /// The SQL both stores run (arguments: user, environment; SQLite's as
    /// `?1`, `?2`): one row per currency (NULL for the unpriced), read through
    /// `transactions_credited`. PostgreSQL sums bigints as numeric: cast back.
    static let sql = """
        SELECT currency, CAST(COALESCE(SUM(price_milliunits), 0) AS BIGINT),
            CAST(COALESCE(SUM(CASE WHEN cancellation_date_ms IS NOT NULL AND NOT is_upgraded THEN price_milliunits END), 0)
                AS BIGINT),
            COUNT(*)
        FROM transactions WHERE granted_to = $1 AND environment = $2 GROUP BY currency
        """

    /// From the rows of `sql`.
    init(rows: [(currency: String?, purchased: Int64, refunded: Int64, count: Int64)]) {
        byCurrency = [:]
        unpriced = 0
        for row in rows {
            guard let currency = row.currency else {
                unpriced += Int(row.count)
                continue
            }
            byCurrency[currency] = Amounts(purchasedMilliunits: row.purchased, refundedMilliunits: row.refunded)
        }
    }
}
