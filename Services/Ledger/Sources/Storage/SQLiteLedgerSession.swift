import Contracts
import Foundation
import GRDB

/// `LedgerSession` over one GRDB connection inside a write (or read)
/// transaction. Every statement is cached: the group commit runs the same few
/// statements thousands of times a second.
final class SQLiteLedgerSession: LedgerSession {
    let db: Database
    /// The seq the next appended event gets; the store moves it back when a unit rolls back.
    var nextSeq: UInt64
    /// The events appended since the store last cleared it (one unit's).
    var appended: [CommittedEvent] = []
    private let prepared: PreparedStatements

    /// - Parameter statements: those held for `db`'s connection; by default, the session's own.
    init(db: Database, statements: PreparedStatements = PreparedStatements(), nextSeq: UInt64 = 0) {
        self.db = db
        self.prepared = statements
        self.nextSeq = nextSeq
    }

    /// The statement of `slot`, looked up in GRDB's cache once per `PreparedStatements`.
    func cached(_ slot: StatementSlot, _ sql: @autoclosure () -> String) throws -> Statement {
        try prepared.statement(slot, sql(), in: db)
    }

    // MARK: Transactions

    static let transactionColumns = LedgerColumns.transaction
    static let joinedTransactionColumns = LedgerColumns.joinedTransaction

    func transaction(_ key: TransactionKey) throws -> StoredTransaction? {
        let statement = try cached(.transaction,
            "SELECT \(Self.transactionColumns) FROM transactions WHERE environment = ? AND transaction_id = ?")
        return try statement.mapFirstRow({
            $0.text(StoredEnvironment.name(key.environment))
            $0.text(key.transactionID)
        }, Self.storedTransaction)
    }

    /// A purchase's transactions in order (arguments: environment, original transaction id).
    static let transactionsOfPurchaseSQL = """
        SELECT \(transactionColumns) FROM transactions
        WHERE environment = ? AND original_transaction_id = ? ORDER BY purchase_date_ms, transaction_id
        """

    func transactions(of subscription: SubscriptionKey) throws -> [StoredTransaction] {
        let statement = try cached(.transactionsOfPurchase, Self.transactionsOfPurchaseSQL)
        return try statement.mapRows(
            arguments: [StoredEnvironment.name(subscription.environment), subscription.originalTransactionID],
            Self.storedTransaction)
    }

    /// Every record asks this of each purchase it names, and the answer is almost always none:
    /// through the partial index of uncredited transactions, which holds almost nothing.
    /// INDEXED BY: a plan that cannot use it fails here instead of reading the purchase's rows.
    func unclaimedTransactions(of subscription: SubscriptionKey) throws -> [StoredTransaction] {
        let statement = try cached(.unclaimedTransactions,
            """
                SELECT \(Self.transactionColumns) FROM transactions INDEXED BY transactions_unclaimed
                WHERE environment = ? AND original_transaction_id = ? AND granted_to IS NULL
                    AND (cancellation_date_ms IS NULL OR is_upgraded = 1)
                ORDER BY purchase_date_ms, transaction_id
                """)
        return try statement.mapRows({
            $0.text(StoredEnvironment.name(subscription.environment))
            $0.text(subscription.originalTransactionID)
        }, Self.storedTransaction)
    }

    func insertIfNew(_ transaction: StoredTransaction) throws -> Bool {
        try insertIfNew(transaction, grantedSeq: nil)
    }

    /// One INSERT that already holds the seq the event is about to take (`append` numbers from
    /// `nextSeq`, and nothing appends in between): no UPDATE of the row, and of the credit
    /// index, to set it afterwards.
    func insertIfNew(_ transaction: StoredTransaction, creditedBy event: @autoclosure () -> LedgerEvent) throws
        -> LedgerEvent?
    {
        let seq = nextSeq
        guard try insertIfNew(transaction, grantedSeq: Int64(clamping: seq)) else { return nil }
        let appended = try append(event())
        assert(appended.seq == seq, "append numbers from nextSeq")
        return appended
    }

    private func insertIfNew(_ transaction: StoredTransaction, grantedSeq: Int64?) throws -> Bool {
        let statement = try cached(.insertTransaction,
            """
                INSERT INTO transactions (\(Self.transactionColumns), granted_seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (environment, transaction_id) DO NOTHING
                """)
        try statement.run {
            Self.bind(transaction, into: &$0)
            $0.integer(grantedSeq)
        }
        return db.changesCount == 1
    }

    func update(_ transaction: StoredTransaction) throws {
        let statement = try cached(.updateTransaction,
            """
                UPDATE transactions SET original_transaction_id = ?3, product_id = ?4, quantity = ?5,
                    purchase_date_ms = ?6, expires_date_ms = ?7, cancellation_date_ms = ?8, cancellation_reason = ?9,
                    is_upgraded = ?10, granted_to = ?11, granted_at_ms = ?12, reinstated_at_ms = ?13, kind = ?14,
                    price_milliunits = ?15, currency = ?16
                WHERE environment = ?1 AND transaction_id = ?2
                """)
        try statement.run { Self.bind(transaction, into: &$0) }
    }

    /// A transaction's 16 columns in `transactionColumns` order, parameters 1-16 of its INSERT and UPDATE.
    private static func bind(_ t: StoredTransaction, into binder: inout ParameterBinder) {
        binder.text(StoredEnvironment.name(t.key.environment))
        binder.text(t.key.transactionID)
        binder.text(t.originalTransactionID)
        binder.text(t.productID)
        binder.integer(Int64(t.quantity))
        binder.integer(t.purchaseDateMs)
        binder.integer(t.expiresDateMs)
        binder.integer(t.cancellationDateMs)
        binder.integer(t.cancellationReason.map { Int64($0) })
        binder.bool(t.isUpgraded)
        binder.text(t.grantedTo)
        binder.integer(t.grantedAtMs)
        binder.integer(t.reinstatedAtMs)
        binder.text(t.kind.flatMap(ProductCatalog.name(of:)))
        binder.integer(t.priceMilliunits)
        binder.text(t.currency)
    }

    static func storedTransaction(_ row: SteppedRow) -> StoredTransaction {
        StoredTransaction(
            key: TransactionKey(StoredEnvironment.environment(row[0]), row[1]), originalTransactionID: row[2],
            productID: row[3], quantity: Int32(truncatingIfNeeded: row[4] as Int64), purchaseDateMs: row[5],
            expiresDateMs: row[6], cancellationDateMs: row[7],
            cancellationReason: (row[8] as Int64?).map { Int32(truncatingIfNeeded: $0) }, isUpgraded: row[9],
            grantedTo: row[10], grantedAtMs: row[11], reinstatedAtMs: row[12],
            kind: (row[13] as String?).flatMap(ProductCatalog.kind(named:)), priceMilliunits: row[14], currency: row[15])
    }

    /// A user's purchases of a lasting kind StoreKit 2 stated, through the small partial
    /// index that holds only those (arguments: user). INDEXED BY: a plan that cannot use it fails
    /// here instead of probing every transaction of every purchase the user bound.
    private static let statedLastingSQL = """
        SELECT \(joinedTransactionColumns) FROM bindings b
        JOIN transactions t INDEXED BY transactions_lasting
            ON t.environment = b.environment AND t.original_transaction_id = b.original_transaction_id
        WHERE b.user_id = ?1 AND t.expires_date_ms IS NULL AND t.kind IN ('non_consumable', 'non_renewing')
        """

    /// And those of no stated kind whose product the catalog lists (arguments: user, products as
    /// JSON). INDEXED BY: without statistics SQLite joined on the primary key's environment prefix
    /// alone, scanning every transaction of the environment per binding.
    private static let statedOrListedLastingSQL = """
        \(statedLastingSQL)
        UNION ALL
        SELECT \(joinedTransactionColumns) FROM bindings b
        JOIN transactions t INDEXED BY transactions_by_original
            ON t.environment = b.environment AND t.original_transaction_id = b.original_transaction_id
        WHERE b.user_id = ?1 AND t.expires_date_ms IS NULL AND t.kind IS NULL
            AND t.product_id IN (SELECT value FROM json_each(?2))
        """

    /// In `StoredOrder`'s order, sorted here rather than by SQLite (why: `StoredOrder`).
    func oneOffPurchases(ownedBy user: String, listedProducts: [String]) throws -> [StoredTransaction] {
        var purchases: [StoredTransaction]
        if listedProducts.isEmpty {
            let statement = try cached(.statedLasting, Self.statedLastingSQL)
            purchases = try statement.mapRows({ $0.text(user) }, Self.storedTransaction)
        } else {
            let statement = try cached(.statedOrListedLasting, Self.statedOrListedLastingSQL)
            let products = String(decoding: try JSONEncoder().encode(listedProducts), as: UTF8.self)
            purchases = try statement.mapRows({
                $0.text(user)
                $0.text(products)
            }, Self.storedTransaction)
        }
        purchases.sort(by: StoredOrder.transactions)
        return purchases
    }

    // MARK: Bindings

    func owner(of subscription: SubscriptionKey) throws -> String? {
        let statement = try cached(.owner,
            "SELECT user_id FROM bindings WHERE environment = ? AND original_transaction_id = ?")
        return try String.fetchOne(
            statement, arguments: [StoredEnvironment.name(subscription.environment), subscription.originalTransactionID])
    }

    func bind(_ subscription: SubscriptionKey, to user: String, from previous: String?, at: Int64, requestID: String) throws {
        let environment = StoredEnvironment.name(subscription.environment)
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO bindings (environment, original_transaction_id, user_id, bound_at_ms) VALUES (?, ?, ?, ?)
                ON CONFLICT (environment, original_transaction_id) DO UPDATE SET user_id = excluded.user_id,
                    bound_at_ms = excluded.bound_at_ms
                """)
        try upsert.execute(arguments: [environment, subscription.originalTransactionID, user, at])
        // The first binding is the row above (with its time); the history keeps every move.
        guard let previous else { return }
        let history = try db.cachedStatement(
            sql: """
                INSERT INTO binding_history (environment, original_transaction_id, from_user_id, to_user_id, at_ms, request_id)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
        try history.execute(arguments: [environment, subscription.originalTransactionID, previous, user, at, requestID])
    }

    /// One statement for a purchase seen for the first time, the common case.
    func bindIfUnbound(_ subscription: SubscriptionKey, to user: String, at: Int64) throws -> String? {
        let insert = try cached(.bindIfUnbound,
            """
                INSERT INTO bindings (environment, original_transaction_id, user_id, bound_at_ms) VALUES (?, ?, ?, ?)
                ON CONFLICT (environment, original_transaction_id) DO NOTHING
                """)
        try insert.run {
            $0.text(StoredEnvironment.name(subscription.environment))
            $0.text(subscription.originalTransactionID)
            $0.text(user)
            $0.integer(at)
        }
        return db.changesCount == 1 ? nil : try owner(of: subscription)
    }

    // MARK: Subscriptions

    private static let subscriptionColumns = LedgerColumns.subscription

    func subscription(_ key: SubscriptionKey) throws -> SubscriptionRecord? {
        let statement = try cached(.subscription,
            "SELECT \(Self.subscriptionColumns) FROM subscriptions s WHERE environment = ? AND original_transaction_id = ?"
        )
        return try statement.mapFirstRow(
            arguments: [StoredEnvironment.name(key.environment), key.originalTransactionID], Self.subscriptionRecord)
    }

    /// One column, no `Row`: asked of every one-off purchase a receipt names.
    func hasSubscription(_ key: SubscriptionKey) throws -> Bool {
        let statement = try cached(.hasSubscription,
            "SELECT 1 FROM subscriptions WHERE environment = ? AND original_transaction_id = ?")
        return try statement.mapFirstRow({
            $0.text(StoredEnvironment.name(key.environment))
            $0.text(key.originalTransactionID)
        }) { _ in true } ?? false
    }

    func subscriptions(ownedBy user: String) throws -> [SubscriptionRecord] {
        let statement = try cached(.subscriptionsOwnedBy,
            """
                SELECT \(Self.subscriptionColumns) FROM bindings b
                JOIN subscriptions s ON s.environment = b.environment AND s.original_transaction_id = b.original_transaction_id
                WHERE b.user_id = ?
                """)
        // Sorted here rather than by SQLite (why: `StoredOrder`).
        return try statement.mapRows({ $0.text(user) }, Self.subscriptionRecord).sorted(by: StoredOrder.subscriptions)
    }

    /// When a lapsed subscription is due for another refresh (argument ?1: now).
    private static let refreshDue = "s.expires_date_ms <= ?1 AND (s.next_refresh_at_ms IS NULL OR s.next_refresh_at_ms <= ?1)"

    /// Lapsed auto-renewing subscriptions with a receipt to refresh (arguments: now, limit).
    static let dueForRefreshSQL = ownedSubscriptionsSQL(
        where: "s.revoked_at_ms IS NULL AND s.auto_renew = 1 AND s.latest_receipt <> '' AND \(refreshDue)")

    /// Lapsed auto-renewing subscriptions, with a receipt or not (the Server API needs none).
    static let renewingDueForRefreshSQL = ownedSubscriptionsSQL(
        where: "s.revoked_at_ms IS NULL AND s.auto_renew = 1 AND \(refreshDue)")

    /// Lapsed StoreKit 2 subscriptions whose auto-renew state no renewal info told yet.
    static let unstatedDueForRefreshSQL = ownedSubscriptionsSQL(
        where: "s.revoked_at_ms IS NULL AND s.auto_renew IS NULL AND s.latest_receipt = '' AND \(refreshDue)")

    /// Subscriptions whose `subscription.expired` event is due (arguments: now, limit).
    static let newlyExpiredSQL = ownedSubscriptionsSQL(
        where: """
            s.revoked_at_ms IS NULL AND (s.expired_event_for_ms IS NULL OR s.expired_event_for_ms < s.expires_date_ms)
            AND s.expires_date_ms <= ?1 AND (s.grace_expires_date_ms IS NULL OR s.grace_expires_date_ms <= ?1)
            """)

    func subscriptionsDueForRefresh(now: Int64, limit: Int, withoutReceipt: Bool) throws -> [OwnedSubscription] {
        guard withoutReceipt else { return try ownedSubscriptions(Self.dueForRefreshSQL, now: now, limit: limit) }
        // Two statements, each served by its partial index (an OR of both would scan).
        let renewing = try ownedSubscriptions(Self.renewingDueForRefreshSQL, now: now, limit: limit)
        let unstated = try ownedSubscriptions(Self.unstatedDueForRefreshSQL, now: now, limit: limit)
        return OwnedSubscription.soonestFirst(renewing + unstated, limit: limit)
    }

    func subscriptionsNewlyExpired(now: Int64, limit: Int) throws -> [OwnedSubscription] {
        try ownedSubscriptions(Self.newlyExpiredSQL, now: now, limit: limit)
    }

    private static func ownedSubscriptionsSQL(where condition: String) -> String {
        """
        SELECT \(subscriptionColumns), b.user_id FROM subscriptions s
        LEFT JOIN bindings b ON b.environment = s.environment AND b.original_transaction_id = s.original_transaction_id
        WHERE \(condition) ORDER BY s.expires_date_ms, s.environment, s.original_transaction_id LIMIT ?2
        """
    }

    private func ownedSubscriptions(_ sql: String, now: Int64, limit: Int) throws -> [OwnedSubscription] {
        let statement = try db.cachedStatement(sql: sql)
        return try statement.mapRows(arguments: [now, limit]) { row in
            OwnedSubscription(owner: row[17], subscription: Self.subscriptionRecord(row))
        }
    }

    func save(_ s: SubscriptionRecord) throws {
        let statement = try cached(.saveSubscription,
            """
                INSERT OR REPLACE INTO subscriptions (
                    environment, original_transaction_id, product_id, expires_date_ms, revoked_at_ms, auto_renew,
                    auto_renew_product_id, expiration_intent, billing_retry, grace_expires_date_ms, price_consent_status,
                    renewal_info_at_ms, latest_receipt, expired_event_for_ms, next_refresh_at_ms, refresh_attempts,
                    updated_at_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try statement.execute(arguments: [
            StoredEnvironment.name(s.key.environment), s.key.originalTransactionID, s.productID, s.expiresDateMs,
            s.revokedAtMs, s.autoRenew, s.autoRenewProductID, s.expirationIntent.map { Int64($0) }, s.billingRetry,
            s.graceExpiresDateMs, s.priceConsentStatus.map { Int64($0) }, s.renewalInfoAtMs, s.latestReceipt, s.expiredEventForMs,
            s.nextRefreshAtMs, Int64(s.refreshAttempts), s.updatedAtMs,
        ])
    }

    private static func subscriptionRecord(_ row: SteppedRow) -> SubscriptionRecord {
        var s = SubscriptionRecord(key: SubscriptionKey(StoredEnvironment.environment(row[0]), row[1]))
        s.productID = row[2]
        s.expiresDateMs = row[3]
        s.revokedAtMs = row[4]
        s.autoRenew = row[5]
        s.autoRenewProductID = row[6]
        s.expirationIntent = (row[7] as Int64?).map { Int32(truncatingIfNeeded: $0) }
        s.billingRetry = row[8]
        s.graceExpiresDateMs = row[9]
        s.priceConsentStatus = (row[10] as Int64?).map { Int32(truncatingIfNeeded: $0) }
        s.renewalInfoAtMs = row[11]
        s.latestReceipt = row[12]
        s.expiredEventForMs = row[13]
        s.nextRefreshAtMs = row[14]
        s.refreshAttempts = Int32(truncatingIfNeeded: row[15] as Int64)
        s.updatedAtMs = row[16]
        return s
    }

    // MARK: Notifications

    func recordNotification(id: String, type: String, subscription: SubscriptionKey, at: Int64) throws -> Bool {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO notifications (notification_id, notification_type, environment, original_transaction_id, received_at_ms)
                VALUES (?, ?, ?, ?, ?) ON CONFLICT (notification_id) DO NOTHING
                """)
        try statement.execute(arguments: [
            id, type, StoredEnvironment.name(subscription.environment), subscription.originalTransactionID, at,
        ])
        return db.changesCount == 1
    }

    // MARK: Events

    func append(_ event: consuming LedgerEvent) throws -> LedgerEvent {
        event.seq = nextSeq
        let statement = try cached(.appendEvent,
            "INSERT INTO events (seq, topic, occurred_at_ms, event) VALUES (?, ?, ?, ?)")
        let bytes: [UInt8] = try event.serializedBytes()
        try statement.run {
            $0.integer(Int64(event.seq))
            $0.text(event.topic)
            $0.integer(event.occurredAtMs)
            $0.blob(bytes)
        }
        nextSeq += 1
        appended.append(CommittedEvent(event: copy event, bytes: bytes))
        return event
    }

    func events(after seq: UInt64, limit: Int) throws -> [LedgerEvent] {
        let statement = try db.cachedStatement(sql: "SELECT event FROM events WHERE seq > ? ORDER BY seq LIMIT ?")
        return try Data.fetchAll(statement, arguments: [Int64(clamping: seq), limit]).map {
            try LedgerEvent(serializedBytes: $0)
        }
    }

    func headSeq() throws -> UInt64 {
        // Cached and stepped directly (`mapFirstRow`): every group commit asks it, and
        // GRDB's `fetchOne` around it cost a group about 7,000 instructions.
        let head = try cached(.headSeq, "SELECT MAX(seq) FROM events").mapFirstRow({ _ in }) { $0[0] as Int64? }
        return UInt64(head.flatMap { $0 } ?? 0)
    }

    func oldestRetainedSeq() throws -> UInt64 {
        if let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(seq) FROM events") { return UInt64(oldest) }
        return try headSeq() + 1
    }

    /// The events before the first one at or after the cutoff, in `seq` order; all but the
    /// newest when none is (the head `seq` must survive). SQLite reads them by rowid from the
    /// oldest and stops at the first young one, with no index of their time (EventsBySeqMigration).
    static let pruneEventsSQL = """
        DELETE FROM events WHERE seq < coalesce(
            (SELECT MIN(seq) FROM events WHERE occurred_at_ms >= ?), (SELECT MAX(seq) FROM events))
        """

    func pruneEvents(before cutoff: Int64) throws -> Int {
        try db.execute(sql: Self.pruneEventsSQL, arguments: [cutoff])
        return db.changesCount
    }
}
