/// An index of only the transactions nobody was credited yet (stored from a
/// notification before any user presented the purchase). Every recorded
/// purchase asks for them, and the answer is almost always none: through
/// `transactions_by_original` that cost a probe into the purchase's
/// transactions and a read of each one's row (about 15,000 instructions per
/// recorded transaction under callgrind). This index holds almost nothing, and
/// a credited transaction never enters it.
enum UnclaimedTransactionsMigration {
    static let name = "v8-unclaimed-transactions"

    static let sqlite = """
        CREATE INDEX transactions_unclaimed
            ON transactions (environment, original_transaction_id, purchase_date_ms, transaction_id)
            WHERE granted_to IS NULL;
        """
}
