import Contracts

/// What a group commit has written and not yet sent to PostgreSQL: one layer
/// for the units that succeeded, one for the unit running (dropped when it
/// fails, which is all a unit's rollback needs). Each row is kept in its last
/// state, so the whole group goes out as one multi-row statement per table.
struct PostgresPendingWrites {
    struct Row {
        var transaction: StoredTransaction
        /// Not in the database before this group: inserted rather than updated.
        var isNew: Bool
    }

    struct Binding: Equatable {
        var user: String
        var atMs: Int64
    }

    struct Move {
        var subscription: SubscriptionKey
        var from: String
        var to: String
        var atMs: Int64
        var requestID: String
    }

    struct Notification {
        var type: String
        var subscription: SubscriptionKey
        var atMs: Int64
    }

    var transactions: [TransactionKey: Row] = [:]
    /// The pending transactions of each purchase.
    var transactionsByPurchase: [SubscriptionKey: Set<TransactionKey>] = [:]
    var bindings: [SubscriptionKey: Binding] = [:]
    var moves: [Move] = []
    var subscriptions: [SubscriptionKey: SubscriptionRecord] = [:]
    var notifications: [String: Notification] = [:]
    var events: [LedgerEvent] = []
    var answers: [LedgerPrefetch.AnswerKey: StoredIdempotentAnswer] = [:]

    mutating func put(_ transaction: StoredTransaction, isNew: Bool) {
        let wasNew = transactions[transaction.key]?.isNew ?? false
        transactions[transaction.key] = Row(transaction: transaction, isNew: isNew || wasNew)
        transactionsByPurchase[transaction.subscriptionKey, default: []].insert(transaction.key)
    }

    /// A unit's writes, after it succeeded, on top of the group's.
    mutating func absorb(_ unit: PostgresPendingWrites) {
        for row in unit.transactions.values { put(row.transaction, isNew: row.isNew) }
        bindings.merge(unit.bindings) { _, new in new }
        moves += unit.moves
        subscriptions.merge(unit.subscriptions) { _, new in new }
        notifications.merge(unit.notifications) { _, new in new }
        events += unit.events
        answers.merge(unit.answers) { _, new in new }
    }
}
