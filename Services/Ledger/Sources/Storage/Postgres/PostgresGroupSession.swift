import Contracts
import PostgresNIO

/// The `LedgerSession` of a group commit on PostgreSQL. A round trip per read
/// and per write made the first version 14 times slower than SQLite, so:
/// - reads come from a snapshot cache, filled for the whole group by a few
///   statements (`prefetch`), and from PostgreSQL only for rows not named;
/// - writes wait in memory, the running unit's apart (a unit that fails is
///   dropped with them, no savepoint needed), and go out at the end of the
///   group as one statement per table (`write`).
/// Every read lays the pending writes over what the snapshot says, so a unit
/// sees the units before it and its own writes, as it would in SQL.
///
/// Reads that no key names (maintenance, pruning, the event log) send the
/// pending writes first and run in SQL; the unit then holds a savepoint.
final class PostgresGroupSession: LedgerSession {
    private let direct: PostgresLedgerSession
    private var db: BlockingPostgresConnection { direct.db }
    private var cache = PostgresSnapshotCache()
    private var group = PostgresPendingWrites()
    private var unit = PostgresPendingWrites()
    /// The running unit sent writes to PostgreSQL, inside `SAVEPOINT unit`.
    private(set) var unitHoldsSavepoint = false
    /// Events were written (sent, or pending in the group): the sequencer must be woken.
    private(set) var wroteEvents = false

    init(db: BlockingPostgresConnection) {
        direct = PostgresLedgerSession(db: db)
    }

    // MARK: The group

    /// Loads every row `prefetch` names, a statement per table.
    func prefetch(_ prefetch: LedgerPrefetch) throws {
        for row in try direct.transactions(prefetch.transactions, purchases: prefetch.purchases) { cache.remember(row) }
        for key in prefetch.transactions where cache.transactions[key] == nil { cache.absentTransactions.insert(key) }
        cache.completePurchases.formUnion(prefetch.purchases)

        for (key, user) in try direct.owners(of: prefetch.purchases) { cache.owners[key] = .some(user) }
        for key in prefetch.purchases where cache.owners[key] == nil { cache.owners[key] = .some(nil) }
        for row in try direct.subscriptions(prefetch.purchases) { cache.subscriptions[row.key] = .some(row) }
        for key in prefetch.purchases where cache.subscriptions[key] == nil { cache.subscriptions[key] = .some(nil) }
        try loadSubscriptions(ownedBy: prefetch.users)
        try loadOneOffPurchases(ownedBy: prefetch.users, listed: prefetch.listedProducts)

        let applied = try direct.appliedNotifications(prefetch.notificationIDs)
        for id in prefetch.notificationIDs { cache.appliedNotifications[id] = applied.contains(id) }
        for key in prefetch.answers { cache.answers[key] = .some(nil) }
        for answer in try direct.idempotentAnswers(prefetch.answers) {
            cache.answers[.init(scope: answer.scope, key: answer.key)] = answer
        }
    }

    func beginUnit() {
        unit = PostgresPendingWrites()
        unitHoldsSavepoint = false
    }

    /// The unit succeeded: its writes join the group's.
    func endUnit() throws {
        if unitHoldsSavepoint {
            try send(unit)
            try db.query("RELEASE SAVEPOINT unit")
            cache = PostgresSnapshotCache()
        } else {
            group.absorb(unit)
        }
        unit = PostgresPendingWrites()
        unitHoldsSavepoint = false
    }

    /// The unit failed: nothing of it remains.
    func abandonUnit() throws {
        if unitHoldsSavepoint {
            try db.query("ROLLBACK TO SAVEPOINT unit")
            // The cache was refilled inside the savepoint, from rows now undone.
            cache = PostgresSnapshotCache()
        }
        unit = PostgresPendingWrites()
        unitHoldsSavepoint = false
    }

    /// Sends the group's writes; the caller commits.
    func finish() throws {
        try send(group)
        group = PostgresPendingWrites()
    }

    private func send(_ writes: PostgresPendingWrites) throws {
        if !writes.events.isEmpty { wroteEvents = true }
        try direct.write(writes)
    }

    /// Before SQL that reads what no key names: everything pending goes to
    /// PostgreSQL, the running unit's inside a savepoint.
    private func sendPending() throws {
        if !unitHoldsSavepoint {
            try finish()
            try db.query("SAVEPOINT unit")
            unitHoldsSavepoint = true
        }
        try send(unit)
        unit = PostgresPendingWrites()
        // The cache holds rows from before the writes just sent.
        cache = PostgresSnapshotCache()
    }

    // MARK: Transactions

    private func pending(_ key: TransactionKey) -> StoredTransaction? {
        unit.transactions[key]?.transaction ?? group.transactions[key]?.transaction
    }

    func transaction(_ key: TransactionKey) throws -> StoredTransaction? {
        if let row = pending(key) ?? cache.transactions[key] { return row }
        if cache.absentTransactions.contains(key) { return nil }
        guard let row = try direct.transaction(key) else {
            cache.absentTransactions.insert(key)
            return nil
        }
        cache.remember(row)
        return row
    }

    func transactions(of subscription: SubscriptionKey) throws -> [StoredTransaction] {
        if !cache.completePurchases.contains(subscription) {
            for row in try direct.transactions(of: subscription) { cache.remember(row) }
            cache.completePurchases.insert(subscription)
        }
        let keys = (cache.transactionsByPurchase[subscription] ?? [])
            .union(group.transactionsByPurchase[subscription] ?? []).union(unit.transactionsByPurchase[subscription] ?? [])
        return keys.compactMap { pending($0) ?? cache.transactions[$0] }
            .filter { $0.originalTransactionID == subscription.originalTransactionID }
            .sorted { ($0.purchaseDateMs, $0.key.transactionID) < ($1.purchaseDateMs, $1.key.transactionID) }
    }

    func insertIfNew(_ transaction: StoredTransaction) throws -> Bool {
        guard try self.transaction(transaction.key) == nil else { return false }
        unit.put(transaction, isNew: true)
        return true
    }

    func update(_ transaction: StoredTransaction) throws {
        unit.put(transaction, isNew: false)
    }

    func oneOffPurchases(ownedBy user: String, listedProducts: [String]) throws -> [StoredTransaction] {
        try loadOneOffPurchases(ownedBy: [user], listed: listedProducts)
        // The snapshot's, then whatever this group wrote or bound that may count; filtered at the end.
        var rows: [TransactionKey: StoredTransaction] = [:]
        for key in cache.oneOffOwnedBy[user] ?? [] {
            if let row = pending(key) ?? cache.transactions[key] { rows[key] = row }
        }
        for purchase in purchasesBound(to: user) {
            for row in try transactions(of: purchase) { rows[row.key] = row }
        }
        for purchase in Set(group.transactionsByPurchase.keys).union(unit.transactionsByPurchase.keys)
        where try owner(of: purchase) == user {
            for key in (group.transactionsByPurchase[purchase] ?? []).union(unit.transactionsByPurchase[purchase] ?? []) {
                rows[key] = pending(key)
            }
        }
        let listed = Set(listedProducts)
        return try rows.values.filter { row in
            guard row.expiresDateMs == nil,
                row.kind == .nonConsumable || row.kind == .nonRenewing || (row.kind == nil && listed.contains(row.productID))
            else { return false }
            return try owner(of: row.subscriptionKey) == user
        }.sorted {
            ($0.originalTransactionID, StoredEnvironment.name($0.key.environment), $0.purchaseDateMs, $0.key.transactionID)
                < ($1.originalTransactionID, StoredEnvironment.name($1.key.environment), $1.purchaseDateMs, $1.key.transactionID)
        }
    }

    /// The snapshot's one-off purchases of `users` (by the query `oneOffPurchases` is, so a user with
    /// thousands of consumables costs nothing here).
    private func loadOneOffPurchases(ownedBy users: Set<String>, listed: [String]) throws {
        if cache.oneOffListed != listed {
            cache.oneOffOwnedBy = [:]
            cache.oneOffListed = listed
        }
        let users = users.filter { cache.oneOffOwnedBy[$0] == nil }
        guard !users.isEmpty else { return }
        for user in users { cache.oneOffOwnedBy[user] = [] }
        for (row, user) in try direct.oneOffPurchases(ownedBy: users, listedProducts: listed) {
            if cache.transactions[row.key] == nil { cache.remember(row) }
            cache.owners[row.subscriptionKey] = .some(user)
            cache.oneOffOwnedBy[user]!.append(row.key)
        }
    }

    // MARK: Bindings

    func owner(of subscription: SubscriptionKey) throws -> String? {
        if let binding = unit.bindings[subscription] ?? group.bindings[subscription] { return binding.user }
        if let owner = cache.owners[subscription] { return owner }
        let owner = try direct.owner(of: subscription)
        cache.owners[subscription] = .some(owner)
        return owner
    }

    /// The purchases this group bound to `user` (and did not move on).
    private func purchasesBound(to user: String) -> Set<SubscriptionKey> {
        var keys = Set<SubscriptionKey>()
        for (key, binding) in group.bindings where binding.user == user && unit.bindings[key] == nil { keys.insert(key) }
        for (key, binding) in unit.bindings where binding.user == user { keys.insert(key) }
        return keys
    }

    func bind(_ subscription: SubscriptionKey, to user: String, from previous: String?, at: Int64, requestID: String) throws {
        unit.bindings[subscription] = .init(user: user, atMs: at)
        guard let previous else { return }
        unit.moves.append(.init(subscription: subscription, from: previous, to: user, atMs: at, requestID: requestID))
    }

    // MARK: Subscriptions

    func subscription(_ key: SubscriptionKey) throws -> SubscriptionRecord? {
        if let row = unit.subscriptions[key] ?? group.subscriptions[key] { return row }
        if let row = cache.subscriptions[key] { return row }
        let row = try direct.subscription(key)
        cache.subscriptions[key] = .some(row)
        return row
    }

    func subscriptions(ownedBy user: String) throws -> [SubscriptionRecord] {
        try loadSubscriptions(ownedBy: [user])
        // The snapshot's, those this group bound to the user, and those it created for purchases the user holds.
        var keys = purchasesBound(to: user)
        for key in cache.subscriptionsOwnedBy[user] ?? [] where try owner(of: key) == user { keys.insert(key) }
        for key in Set(group.subscriptions.keys).union(unit.subscriptions.keys) where try owner(of: key) == user {
            keys.insert(key)
        }
        let missing = keys.filter {
            unit.subscriptions[$0] == nil && group.subscriptions[$0] == nil && cache.subscriptions[$0] == nil
        }
        if !missing.isEmpty {
            for row in try direct.subscriptions(missing) { cache.subscriptions[row.key] = .some(row) }
            for key in missing where cache.subscriptions[key] == nil { cache.subscriptions[key] = .some(nil) }
        }
        return try keys.compactMap { try subscription($0) }.sorted {
            ($0.key.originalTransactionID, StoredEnvironment.name($0.key.environment))
                < ($1.key.originalTransactionID, StoredEnvironment.name($1.key.environment))
        }
    }

    private func loadSubscriptions(ownedBy users: Set<String>) throws {
        let users = users.filter { cache.subscriptionsOwnedBy[$0] == nil }
        guard !users.isEmpty else { return }
        for user in users { cache.subscriptionsOwnedBy[user] = [] }
        for (row, user) in try direct.subscriptions(ownedBy: users) {
            if cache.subscriptions[row.key] == nil { cache.subscriptions[row.key] = .some(row) }
            cache.owners[row.key] = .some(user)
            cache.subscriptionsOwnedBy[user]!.append(row.key)
        }
    }

    func save(_ subscription: SubscriptionRecord) throws {
        unit.subscriptions[subscription.key] = subscription
    }

    func subscriptionsDueForRefresh(now: Int64, limit: Int, withoutReceipt: Bool) throws -> [OwnedSubscription] {
        try sendPending()
        return try direct.subscriptionsDueForRefresh(now: now, limit: limit, withoutReceipt: withoutReceipt)
    }

    func subscriptionsNewlyExpired(now: Int64, limit: Int) throws -> [OwnedSubscription] {
        try sendPending()
        return try direct.subscriptionsNewlyExpired(now: now, limit: limit)
    }

    // MARK: Notifications

    func recordNotification(id: String, type: String, subscription: SubscriptionKey, at: Int64) throws -> Bool {
        if unit.notifications[id] != nil || group.notifications[id] != nil { return false }
        let applied: Bool
        if let known = cache.appliedNotifications[id] {
            applied = known
        } else {
            applied = !(try direct.appliedNotifications([id]).isEmpty)
            cache.appliedNotifications[id] = applied
        }
        guard !applied else { return false }
        unit.notifications[id] = .init(type: type, subscription: subscription, atMs: at)
        return true
    }

    // MARK: Events

    /// Kept unnumbered (seq 0): the sequencer numbers it after the commit.
    func append(_ event: consuming LedgerEvent) throws -> LedgerEvent {
        unit.events.append(copy event)
        return event
    }

    /// Nothing to do: the sequencer sets `granted_seq` when it numbers the event.
    func setGrantedSeq(_ transaction: TransactionKey, seq: UInt64) throws {}

    func events(after seq: UInt64, limit: Int) throws -> [LedgerEvent] {
        try sendPending()
        return try direct.events(after: seq, limit: limit)
    }

    func headSeq() throws -> UInt64 {
        try sendPending()
        return try direct.headSeq()
    }

    func oldestRetainedSeq() throws -> UInt64 {
        try sendPending()
        return try direct.oldestRetainedSeq()
    }

    func pruneEvents(before cutoff: Int64) throws -> Int {
        try sendPending()
        return try direct.pruneEvents(before: cutoff)
    }

    // MARK: Idempotent answers and the transaction list

    func idempotentAnswer(scope: String, key: String) throws -> StoredIdempotentAnswer? {
        let answerKey = LedgerPrefetch.AnswerKey(scope: scope, key: key)
        if let answer = unit.answers[answerKey] ?? group.answers[answerKey] { return answer }
        if let answer = cache.answers[answerKey] { return answer }
        let answer = try direct.idempotentAnswer(scope: scope, key: key)
        cache.answers[answerKey] = .some(answer)
        return answer
    }

    func storeIdempotentAnswer(_ answer: StoredIdempotentAnswer) throws {
        unit.answers[.init(scope: answer.scope, key: answer.key)] = answer
    }

    func pruneIdempotentAnswers(before cutoff: Int64) throws -> Int {
        try sendPending()
        return try direct.pruneIdempotentAnswers(before: cutoff)
    }

    func creditedTransactions(of user: String, after cursor: CreditCursor?, limit: Int) throws -> [CreditedRecord] {
        try sendPending()
        return try direct.creditedTransactions(of: user, after: cursor, limit: limit)
    }

    // MARK: The App Store Server API's work: rare, in SQL, in the unit's savepoint

    func catchUpCursor(_ environment: AppleEnvironment) throws -> CatchUpCursor? {
        try sendPending()
        return try direct.catchUpCursor(environment)
    }

    func saveCatchUpCursor(_ cursor: CatchUpCursor) throws {
        try sendPending()
        try direct.saveCatchUpCursor(cursor)
    }

    func firstBindingAtMs(of user: String) throws -> Int64? {
        try sendPending()
        return try direct.firstBindingAtMs(of: user)
    }

    func lifetimeSpend(of user: String, in environment: AppleEnvironment) throws -> LifetimeSpend {
        try sendPending()
        return try direct.lifetimeSpend(of: user, in: environment)
    }

    func consumptionsDue(now: Int64, limit: Int) throws -> [PendingConsumption] {
        try sendPending()
        return try direct.consumptionsDue(now: now, limit: limit)
    }

    func saveConsumption(_ consumption: PendingConsumption) throws {
        try sendPending()
        try direct.saveConsumption(consumption)
    }

    func deleteConsumption(_ key: TransactionKey) throws {
        try sendPending()
        try direct.deleteConsumption(key)
    }
}
