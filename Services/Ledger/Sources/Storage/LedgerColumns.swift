/// The column lists both stores read rows by (by position: `storedTransaction`
/// and `subscriptionRecord` of each session follow this order).
enum LedgerColumns {
    private static let transactionNames = [
        "environment", "transaction_id", "original_transaction_id", "product_id", "quantity", "purchase_date_ms",
        "expires_date_ms", "cancellation_date_ms", "cancellation_reason", "is_upgraded", "granted_to", "granted_at_ms",
        "reinstated_at_ms", "kind", "price_milliunits", "currency",
    ]
    static let transaction = transactionNames.joined(separator: ", ")
    /// How many: the position of a column a query selects after them.
    static let transactionCount = transactionNames.count
    /// The same columns of the table named `t` in a join.
    static let joinedTransaction = transactionNames.map { "t." + $0 }.joined(separator: ", ")

    /// The subscription columns of the table named `s`.
    static let subscription = """
        s.environment, s.original_transaction_id, s.product_id, s.expires_date_ms, s.revoked_at_ms, s.auto_renew,
        s.auto_renew_product_id, s.expiration_intent, s.billing_retry, s.grace_expires_date_ms, s.price_consent_status,
        s.renewal_info_at_ms, s.latest_receipt, s.expired_event_for_ms, s.next_refresh_at_ms, s.refresh_attempts,
        s.updated_at_ms
        """
}
