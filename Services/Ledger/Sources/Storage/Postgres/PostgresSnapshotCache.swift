import Contracts

/// Rows as the group's snapshot holds them, each read from PostgreSQL once
/// (most by `PostgresGroupSession.prefetch`). Never holds a pending write: the
/// session lays those on top, so a unit that fails leaves this valid.
struct PostgresSnapshotCache {
    var transactions: [TransactionKey: StoredTransaction] = [:]
    var absentTransactions: Set<TransactionKey> = []
    var transactionsByPurchase: [SubscriptionKey: Set<TransactionKey>] = [:]
    /// Purchases whose every transaction is in `transactions`.
    var completePurchases: Set<SubscriptionKey> = []
    /// nil: known to be bound to nobody.
    var owners: [SubscriptionKey: String?] = [:]
    /// Every purchase bound to each of these users.
    var ownedBy: [String: Set<SubscriptionKey>] = [:]
    var subscriptions: [SubscriptionKey: SubscriptionRecord?] = [:]
    var appliedNotifications: [String: Bool] = [:]
    var answers: [LedgerPrefetch.AnswerKey: StoredIdempotentAnswer?] = [:]
    /// `oneOffPurchases` candidates of these users, for `oneOffListed` (rows in `transactions`).
    var oneOffUsers: Set<String> = []
    var oneOffListed: [String] = []
    var oneOffByPurchase: [SubscriptionKey: Set<TransactionKey>] = [:]

    mutating func remember(_ transaction: StoredTransaction) {
        transactions[transaction.key] = transaction
        absentTransactions.remove(transaction.key)
        transactionsByPurchase[transaction.subscriptionKey, default: []].insert(transaction.key)
    }

    mutating func rememberBindings(_ rows: [(SubscriptionKey, user: String)], complete users: some Sequence<String>) {
        for user in users { ownedBy[user] = ownedBy[user] ?? [] }
        for (key, user) in rows {
            owners[key] = .some(user)
            if ownedBy[user] != nil { ownedBy[user]!.insert(key) }
        }
    }
}
