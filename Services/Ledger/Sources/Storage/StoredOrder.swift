/// The order of a user's purchases as the SQLite store returns them, put in Swift. An ORDER BY
/// made SQLite open a sorter (a temporary b-tree) at every answer's two reads, which most often
/// return no row or one. Text compares by its UTF-8 bytes, as SQLite's BINARY collation does.
enum StoredOrder {
    /// By original transaction id, then environment.
    static func subscriptions(_ a: SubscriptionRecord, _ b: SubscriptionRecord) -> Bool {
        precedes(a.key, b.key) ?? false
    }

    /// By original transaction id, environment, purchase date, then transaction id.
    static func transactions(_ a: StoredTransaction, _ b: StoredTransaction) -> Bool {
        if let order = precedes(a.subscriptionKey, b.subscriptionKey) { return order }
        if a.purchaseDateMs != b.purchaseDateMs { return a.purchaseDateMs < b.purchaseDateMs }
        return precedes(a.key.transactionID, b.key.transactionID) ?? false
    }

    /// nil when the keys are equal.
    private static func precedes(_ a: SubscriptionKey, _ b: SubscriptionKey) -> Bool? {
        precedes(a.originalTransactionID, b.originalTransactionID)
            ?? precedes(StoredEnvironment.name(a.environment), StoredEnvironment.name(b.environment))
    }

    /// nil when the texts are equal.
    private static func precedes(_ a: String, _ b: String) -> Bool? {
        a == b ? nil : a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}
