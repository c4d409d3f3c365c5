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

        cache.rememberBindings(try direct.bindings(of: prefetch.purchases, users: prefetch.users), complete: prefetch.users)
        for key in prefetch.purchases where cache.owners[key] == nil { cache.owners[key] = .some(nil) }

        var subscriptions = prefetch.purchases
        for user in prefetch.users { subscriptions.formUnion(cache.ownedBy[user] ?? []) }
        for row in try direct.subscriptions(subscriptions) { cache.subscriptions[row.key] = .some(row) }
        for key in subscriptions where cache.subscriptions[key] == nil { cache.subscriptions[key] = .some(nil) }

        try loadOneOffCandidates(of: prefetch.users, listed: prefetch.listedProducts)

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
        let owned = try ownedPurchases(of: user)
        if !cache.oneOffUsers.contains(user) || cache.oneOffListed != listedProducts {
            try loadOneOffCandidates(of: [user], listed: listedProducts)
        }
        let listed = Set(listedProducts)
        var rows: [StoredTransaction] = []
        for purchase in owned {
            // Bound to the user in the snapshot: its candidates are loaded; bound in this group: read it whole.
            var keys: Set<TransactionKey>
            if cache.ownedBy[user]?.contains(purchase) == true, !cache.completePurchases.contains(purchase) {
                keys = cache.oneOffByPurchase[purchase] ?? []
            } else {
                keys = Set(try transactions(of: purchase).map(\.key))
            }
            keys.formUnion(group.transactionsByPurchase[purchase] ?? [])
            keys.formUnion(unit.transactionsByPurchase[purchase] ?? [])
            rows += keys.compactMap { pending($0) ?? cache.transactions[$0] }.filter {
                $0.subscriptionKey == purchase && $0.expiresDateMs == nil
                    && ($0.kind == .nonConsumable || $0.kind == .nonRenewing
                        || ($0.kind == nil && listed.contains($0.productID)))
            }
        }
        return rows.sorted {
            ($0.originalTransactionID, StoredEnvironment.name($0.key.environment), $0.purchaseDateMs, $0.key.transactionID)
                < ($1.originalTransactionID, StoredEnvironment.name($1.key.environment), $1.purchaseDateMs, $1.key.transactionID)
        }
    }

    private func loadOneOffCandidates(of users: Set<String>, listed: [String]) throws {
        if cache.oneOffListed != listed {
            cache.oneOffUsers = []
            cache.oneOffByPurchase = [:]
            cache.oneOffListed = listed
        }
        let users = users.subtracting(cache.oneOffUsers)
        guard !users.isEmpty else { return }
        for row in try direct.oneOffPurchases(ownedBy: users, listedProducts: listed) {
            if cache.transactions[row.key] == nil { cache.remember(row) }
            cache.oneOffByPurchase[row.subscriptionKey, default: []].insert(row.key)
        }
        cache.oneOffUsers.formUnion(users)
        // The candidates came by the users' bindings: those must be known to match them.
        for user in users where cache.ownedBy[user] == nil {
            cache.rememberBindings(try direct.bindings(of: [SubscriptionKey](), users: [user]), complete: [user])
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

    /// The purchases bound to `user` now: the snapshot's, less those moved away, plus those bound in this group.
    private func ownedPurchases(of user: String) throws -> Set<SubscriptionKey> {
        if cache.ownedBy[user] == nil {
            cache.rememberBindings(try direct.bindings(of: [SubscriptionKey](), users: [user]), complete: [user])
        }
        var owned = Set(try cache.ownedBy[user, default: []].filter { try owner(of: $0) == user })
        for (key, binding) in group.bindings where binding.user == user && unit.bindings[key] == nil { owned.insert(key) }
        for (key, binding) in unit.bindings where binding.user == user { owned.insert(key) }
        return owned
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
        let owned = try ownedPurchases(of: user)
        let missing = owned.filter {
            unit.subscriptions[$0] == nil && group.subscriptions[$0] == nil && cache.subscriptions[$0] == nil
        }
        if !missing.isEmpty {
            for row in try direct.subscriptions(missing) { cache.subscriptions[row.key] = .some(row) }
            for key in missing where cache.subscriptions[key] == nil { cache.subscriptions[key] = .some(nil) }
        }
        return try owned.compactMap { try subscription($0) }.sorted {
            ($0.key.originalTransactionID, StoredEnvironment.name($0.key.environment))
                < ($1.key.originalTransactionID, StoredEnvironment.name($1.key.environment))
        }
    }

    func save(_ subscription: SubscriptionRecord) throws {
        unit.subscriptions[subscription.key] = subscription
    }

    func subscriptionsDueForRefresh(now: Int64, limit: Int) throws -> [OwnedSubscription] {
        try sendPending()
        return try direct.subscriptionsDueForRefresh(now: now, limit: limit)
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
    func append(_ event: LedgerEvent) throws -> LedgerEvent {
        unit.events.append(event)
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
}
