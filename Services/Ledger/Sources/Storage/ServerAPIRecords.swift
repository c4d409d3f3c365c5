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
