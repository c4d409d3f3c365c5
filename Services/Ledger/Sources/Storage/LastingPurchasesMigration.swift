/// An index of only the purchases that last, by the kind StoreKit 2 stated
/// (non-consumable, non-renewing). Every answer lists a user's lasting
/// purchases; through `transactions_by_original` that cost one probe into
/// every transaction of each purchase the user ever bound, consumables
/// included, so a user with hundreds of consumables made each answer slower.
/// Purchases of unstated kind that the catalog lists are still read through
/// `transactions_by_original` (only when the catalog lists any).
enum LastingPurchasesMigration {
    static let name = "v7-lasting-purchases"

    static let sqlite = """
        CREATE INDEX transactions_lasting
            ON transactions (environment, original_transaction_id, purchase_date_ms, transaction_id)
            WHERE expires_date_ms IS NULL AND kind IN ('non_consumable', 'non_renewing');
        """
}
