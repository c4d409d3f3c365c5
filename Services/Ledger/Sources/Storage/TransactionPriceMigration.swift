/// What Apple charged for each transaction (StoreKit 2's `price` and
/// `currency`), for the lifetime spend the ledger reports in consumption
/// information; NULL for purchases seen only through verifyReceipt, which
/// does not say. Never edited once shipped; one SQL text per store.
enum TransactionPriceMigration {
    static let name = "v6-transaction-prices"

    static let sqlite = """
        ALTER TABLE transactions ADD COLUMN price_milliunits INTEGER;
        ALTER TABLE transactions ADD COLUMN currency TEXT;
        """

    static let postgres = """
        ALTER TABLE transactions ADD COLUMN price_milliunits BIGINT;
        ALTER TABLE transactions ADD COLUMN currency TEXT;
        """
}
