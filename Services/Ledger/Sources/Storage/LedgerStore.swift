import Contracts

/// The ledger's storage, narrow on purpose: the rules (Rules/) are written
/// against `LedgerSession` only, so another database (PostgreSQL) needs a new
/// implementation of these two protocols and nothing else.
public protocol LedgerStore: Sendable {
    /// Runs `apply` once per unit of work, all in ONE durable transaction (group
    /// commit), each unit isolated from the others: a unit that throws has its
    /// changes and events undone while the rest commit. Returns once the commit
    /// is on disk, so an answer built from the outcome may go out. `prefetch`
    /// names the rows the units will read.
    func commit<Output: Sendable>(
        units: Int, prefetch: LedgerPrefetch,
        _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) async throws -> [UnitOutcome<Output>]

    /// How many group commits may run at once. Groups whose prefetches overlap
    /// never do (`LedgerPrefetch.overlaps`); the store must keep the rules true
    /// for those that do, as it does for groups of different ledgers.
    var concurrentCommits: Int { get }

    /// A consistent snapshot read, concurrent with writes.
    func read<Output: Sendable>(_ body: @escaping @Sendable (any LedgerReader) throws -> Output) async throws -> Output
}

/// A store whose commit is quickest on the caller's own thread, blocking it
/// (SQLite: GRDB's synchronous write runs where it is called, where its async
/// write hops to GRDB's writer queue and back). `GroupCommitter` gives such a
/// store, when it commits one group at a time, a thread of its own and
/// commits there (`SerialCommitLoop`).
public protocol BlockingLedgerStore: LedgerStore {
    /// `commit`, on the calling thread, which it blocks until the group is on
    /// disk: never from async code, whose threads are the event loops.
    @available(*, noasync, message: "blocks its thread: call it from SerialCommitLoop")
    func commitBlocking<Output: Sendable>(
        units: Int, _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) throws -> [UnitOutcome<Output>]
}

extension LedgerStore {
    /// One writer, one group at a time.
    public var concurrentCommits: Int { 1 }

    /// A group whose reads are not known beforehand.
    public func commit<Output: Sendable>(
        units: Int, _ apply: @escaping @Sendable (_ unit: Int, _ session: any LedgerSession) throws -> Output
    ) async throws -> [UnitOutcome<Output>] {
        try await commit(units: units, prefetch: LedgerPrefetch(), apply)
    }
}

/// What one unit of a group commit produced.
public struct UnitOutcome<Output: Sendable>: Sendable {
    public var result: Result<Output, any Error>
    /// The events the unit appended, with their `seq`; empty when it failed.
    public var events: [CommittedEvent]
}

/// An event as stored: serialized once, for the outbox row and the PUB socket alike.
public struct CommittedEvent: Sendable {
    public let event: LedgerEvent
    public let bytes: [UInt8]
}

/// Reads every rule and endpoint needs.
public protocol LedgerReader {
    func transaction(_ key: TransactionKey) throws -> StoredTransaction?
    /// Every transaction of one subscription (or one-off purchase).
    func transactions(of subscription: SubscriptionKey) throws -> [StoredTransaction]
    /// Those of a purchase credited to nobody and not revoked (stored before the purchase was bound).
    func unclaimedTransactions(of subscription: SubscriptionKey) throws -> [StoredTransaction]
    /// The user a purchase is bound to.
    func owner(of subscription: SubscriptionKey) throws -> String?
    func subscription(_ key: SubscriptionKey) throws -> SubscriptionRecord?
    func hasSubscription(_ key: SubscriptionKey) throws -> Bool
    /// The subscriptions bound to `user`.
    func subscriptions(ownedBy user: String) throws -> [SubscriptionRecord]
    /// The one-off purchases (no expiry) bound to `user` that may be entitlements: StoreKit 2 said
    /// non-consumable or non-renewing, or it did not say and the product is in `listedProducts`
    /// (consumables, the most numerous, are never read).
    func oneOffPurchases(ownedBy user: String, listedProducts: [String]) throws -> [StoredTransaction]
    /// Retained events with seq > `seq`, oldest first, at most `limit`.
    func events(after seq: UInt64, limit: Int) throws -> [LedgerEvent]
    /// The newest committed seq (0 before the first event).
    func headSeq() throws -> UInt64
    /// The oldest retained seq (head + 1 when none is retained).
    func oldestRetainedSeq() throws -> UInt64
    /// Subscriptions whose expiry passed while auto-renew was on and whose next refresh is due:
    /// those with a latest receipt (verifyReceipt), and with `withoutReceipt` (the App Store
    /// Server API is there) also those without, and those without whose auto-renew status
    /// Apple never stated (StoreKit 2 purchases).
    func subscriptionsDueForRefresh(now: Int64, limit: Int, withoutReceipt: Bool) throws -> [OwnedSubscription]
    /// Subscriptions that ran out (expiry and any grace passed, not revoked) with no expired event yet.
    func subscriptionsNewlyExpired(now: Int64, limit: Int) throws -> [OwnedSubscription]
    /// The answer kept for (scope, key), whatever its age.
    func idempotentAnswer(scope: String, key: String) throws -> StoredIdempotentAnswer?
    /// Transactions credited to `user`, newest credit first, starting after `cursor`.
    func creditedTransactions(of user: String, after cursor: CreditCursor?, limit: Int) throws -> [CreditedRecord]
    /// The notification catch-up's cursor for one environment.
    func catchUpCursor(_ environment: AppleEnvironment) throws -> CatchUpCursor?
    /// The earliest time a purchase was bound to `user` (its account's tenure with the ledger).
    func firstBindingAtMs(of user: String) throws -> Int64?
    /// What `user`'s credited purchases in `environment` cost, by currency.
    func lifetimeSpend(of user: String, in environment: AppleEnvironment) throws -> LifetimeSpend
    /// Consumption information whose next attempt is due, soonest first.
    func consumptionsDue(now: Int64, limit: Int) throws -> [PendingConsumption]
}

extension LedgerReader {
    public func unclaimedTransactions(of subscription: SubscriptionKey) throws -> [StoredTransaction] {
        try transactions(of: subscription).filter { $0.grantedTo == nil && !$0.isRevoked }
    }

    public func hasSubscription(_ key: SubscriptionKey) throws -> Bool { try subscription(key) != nil }
}

extension LedgerSession {
    public func insertIfNew(_ transaction: StoredTransaction, creditedBy event: @autoclosure () -> LedgerEvent) throws
        -> LedgerEvent?
    {
        guard try insertIfNew(transaction) else { return nil }
        let appended = try append(event())
        try setGrantedSeq(transaction.key, seq: appended.seq)
        return appended
    }

    public func bindIfUnbound(_ subscription: SubscriptionKey, to user: String, at: Int64) throws -> String? {
        if let owner = try owner(of: subscription) { return owner }
        // A first binding writes no history row, so it names no request.
        try bind(subscription, to: user, from: nil, at: at, requestID: "")
        return nil
    }
}

/// Writes, inside one unit of a group commit.
public protocol LedgerSession: LedgerReader {
    /// Inserts a transaction not seen before; false (and nothing written) when it was.
    func insertIfNew(_ transaction: StoredTransaction) throws -> Bool
    /// Inserts a transaction not seen before, credited (`grantedTo`), and appends `event` (its
    /// `transaction.granted`) with the seq kept as its granted seq; nil, and nothing written (the
    /// event not even built), when it was seen before.
    func insertIfNew(_ transaction: StoredTransaction, creditedBy event: @autoclosure () -> LedgerEvent) throws
        -> LedgerEvent?
    func update(_ transaction: StoredTransaction) throws
    /// Binds a purchase to `user`; a move from a `previous` owner is kept in the history.
    func bind(_ subscription: SubscriptionKey, to user: String, from previous: String?, at: Int64, requestID: String) throws
    /// Binds a purchase nobody holds to `user` and returns nil; returns the holder, and binds
    /// nothing, when somebody does.
    func bindIfUnbound(_ subscription: SubscriptionKey, to user: String, at: Int64) throws -> String?
    func save(_ subscription: SubscriptionRecord) throws
    /// Remembers a notification; false when it was applied before.
    func recordNotification(id: String, type: String, subscription: SubscriptionKey, at: Int64) throws -> Bool
    /// Stores `event` with the next seq and returns it with that seq. Consuming: setting the
    /// seq of an event nobody else holds does not copy its storage.
    func append(_ event: consuming LedgerEvent) throws -> LedgerEvent
    /// Drops events older than `cutoff` (ms), always keeping the newest one so the head survives.
    func pruneEvents(before cutoff: Int64) throws -> Int
    /// Keeps `answer` for its (scope, key), replacing an expired one.
    func storeIdempotentAnswer(_ answer: StoredIdempotentAnswer) throws
    /// Drops answers kept since before `cutoff` (ms).
    func pruneIdempotentAnswers(before cutoff: Int64) throws -> Int
    /// Remembers the seq of the `transaction.granted` event that credited a transaction.
    func setGrantedSeq(_ transaction: TransactionKey, seq: UInt64) throws
    func saveCatchUpCursor(_ cursor: CatchUpCursor) throws
    /// Keeps consumption information to send, replacing what was kept for its transaction.
    func saveConsumption(_ consumption: PendingConsumption) throws
    func deleteConsumption(_ key: TransactionKey) throws
}
