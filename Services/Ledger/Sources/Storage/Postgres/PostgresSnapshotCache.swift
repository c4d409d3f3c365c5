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
    var subscriptions: [SubscriptionKey: SubscriptionRecord?] = [:]
    /// Per user: the subscriptions bound to them (rows in `subscriptions`).
    var subscriptionsOwnedBy: [String: [SubscriptionKey]] = [:]
    /// Per user: their `oneOffPurchases` for `oneOffListed` (rows in `transactions`).
    var oneOffOwnedBy: [String: [TransactionKey]] = [:]
    var oneOffListed: [String] = []
    var appliedNotifications: [String: Bool] = [:]
    var answers: [LedgerPrefetch.AnswerKey: StoredIdempotentAnswer?] = [:]

    mutating func remember(_ transaction: StoredTransaction) {
        transactions[transaction.key] = transaction
        absentTransactions.remove(transaction.key)
        transactionsByPurchase[transaction.subscriptionKey, default: []].insert(transaction.key)
    }
}
