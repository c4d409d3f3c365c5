/// The rows a group of work is going to read, named before it runs, so that a
/// store paying a round trip per read (PostgreSQL) loads them in a few
/// statements. Only a hint: a row not named is read when it is asked for.
public struct LedgerPrefetch: Sendable {
    public var transactions: Set<TransactionKey> = []
    /// Purchases whose transactions, owner and subscription will be read.
    public var purchases: Set<SubscriptionKey> = []
    /// Users whose entitlements will be shown.
    public var users: Set<String> = []
    public var notificationIDs: Set<String> = []
    public var answers: Set<AnswerKey> = []
    /// The catalog's products read as one-off entitlements (`LedgerReader.oneOffPurchases`).
    public var listedProducts: [String] = []
    /// Some work reads rows no key names (sweeps, pruning).
    public var readsBeyondKeys = false

    public init() {}

    /// An Idempotency-Key's identity.
    public struct AnswerKey: Hashable, Sendable {
        public var scope: String
        public var key: String

        public init(scope: String, key: String) {
            self.scope = scope
            self.key = key
        }
    }

    /// Two groups may touch the same rows: one must commit before the other starts.
    public func overlaps(_ other: LedgerPrefetch) -> Bool {
        readsBeyondKeys || other.readsBeyondKeys || !users.isDisjoint(with: other.users)
            || !purchases.isDisjoint(with: other.purchases) || !transactions.isDisjoint(with: other.transactions)
            || !notificationIDs.isDisjoint(with: other.notificationIDs) || !answers.isDisjoint(with: other.answers)
    }
}
