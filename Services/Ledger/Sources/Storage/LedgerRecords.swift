import Contracts

/// The environment as the database spells it (a readable column, not an enum number).
public enum StoredEnvironment {
    public static func name(_ environment: AppleEnvironment) -> String { environment.appleName }

    public static func environment(_ name: String) -> AppleEnvironment { AppleEnvironment(appleName: name) ?? .unspecified }
}

/// A transaction's identity: Apple's ids are unique within an environment only.
public struct TransactionKey: Hashable, Sendable {
    public var environment: AppleEnvironment
    public var transactionID: String

    public init(_ environment: AppleEnvironment, _ transactionID: String) {
        self.environment = environment
        self.transactionID = transactionID
    }
}

/// A subscription's (or one-off purchase's) identity: its original transaction, within an environment.
public struct SubscriptionKey: Hashable, Sendable {
    public var environment: AppleEnvironment
    public var originalTransactionID: String

    public init(_ environment: AppleEnvironment, _ originalTransactionID: String) {
        self.environment = environment
        self.originalTransactionID = originalTransactionID
    }
}

/// One row of the dedup table: every transaction the ledger has seen, granted or not.
public struct StoredTransaction: Equatable, Sendable {
    public var key: TransactionKey
    public var originalTransactionID: String
    public var productID: String
    public var quantity: Int32
    public var purchaseDateMs: Int64
    public var expiresDateMs: Int64?
    public var cancellationDateMs: Int64?
    public var cancellationReason: Int32?
    public var isUpgraded: Bool
    /// The user it was credited to; nil while nobody claimed it (seen first in a
    /// notification) or when it was refunded before anyone was credited.
    public var grantedTo: String?
    public var grantedAtMs: Int64?
    /// When Apple reversed a refund of it (REFUND_REVERSED's signedDate): a
    /// refund Apple dated at or before this is the one reversed, and never
    /// revokes it again, in whatever order the two arrive.
    public var reinstatedAtMs: Int64?
    /// StoreKit 2's `type`; nil when the purchase came only through verifyReceipt, which does not say.
    public var kind: ProductKind?
    /// What Apple charged, in thousandths of `currency`; nil when Apple did not say (verifyReceipt).
    public var priceMilliunits: Int64?
    public var currency: String?

    public var subscriptionKey: SubscriptionKey { SubscriptionKey(key.environment, originalTransactionID) }

    /// Refunded or revoked. An upgraded transaction carries a cancellation date
    /// too, but it was replaced, not refunded.
    public var isRevoked: Bool { cancellationDateMs != nil && !isUpgraded }

    /// Until when it gives access: an upgraded one stops when it was replaced.
    public var effectiveExpiresDateMs: Int64? {
        guard let expires = expiresDateMs else { return nil }
        if isUpgraded, let cancelled = cancellationDateMs { return min(expires, cancelled) }
        return expires
    }

    /// The purchase `transaction` belongs to, without the rest of its record (every record
    /// asks this of each transaction it names). An iOS 6 receipt may state no original id:
    /// the transaction is then its own purchase.
    public static func purchaseKey(of transaction: Transaction, environment: AppleEnvironment) -> SubscriptionKey {
        SubscriptionKey(environment, originalTransactionID(of: transaction))
    }

    private static func originalTransactionID(of transaction: Transaction) -> String {
        transaction.originalTransactionID.isEmpty ? transaction.transactionID : transaction.originalTransactionID
    }

    public init(_ transaction: Transaction, environment: AppleEnvironment) {
        key = TransactionKey(environment, transaction.transactionID)
        originalTransactionID = Self.originalTransactionID(of: transaction)
        productID = transaction.productID
        quantity = transaction.quantity
        purchaseDateMs = transaction.purchaseDateMs
        expiresDateMs = transaction.hasExpiresDateMs ? transaction.expiresDateMs : nil
        cancellationDateMs = transaction.hasCancellationDateMs ? transaction.cancellationDateMs : nil
        cancellationReason = transaction.hasCancellationReason ? transaction.cancellationReason : nil
        isUpgraded = transaction.isUpgraded
        grantedTo = nil
        grantedAtMs = nil
        reinstatedAtMs = nil
        kind = transaction.kind == .unspecified ? nil : transaction.kind
        if transaction.hasPriceMilliunits, !transaction.currency.isEmpty {
            priceMilliunits = transaction.priceMilliunits
            currency = transaction.currency
        }
    }

    public init(
        key: TransactionKey, originalTransactionID: String, productID: String, quantity: Int32, purchaseDateMs: Int64,
        expiresDateMs: Int64?, cancellationDateMs: Int64?, cancellationReason: Int32?, isUpgraded: Bool,
        grantedTo: String?, grantedAtMs: Int64?, reinstatedAtMs: Int64? = nil, kind: ProductKind? = nil,
        priceMilliunits: Int64? = nil, currency: String? = nil
    ) {
        self.key = key
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.quantity = quantity
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.cancellationDateMs = cancellationDateMs
        self.cancellationReason = cancellationReason
        self.isUpgraded = isUpgraded
        self.grantedTo = grantedTo
        self.grantedAtMs = grantedAtMs
        self.reinstatedAtMs = reinstatedAtMs
        self.kind = kind
        self.priceMilliunits = priceMilliunits
        self.currency = currency
    }

    /// Whether a refund Apple dated `revoked` is the one a later reversal undid.
    public func refundWasReversed(_ revoked: Int64) -> Bool { reinstatedAtMs.map { revoked <= $0 } ?? false }

    public var grant: Grant {
        var grant = Grant()
        grant.transactionID = key.transactionID
        grant.originalTransactionID = originalTransactionID
        grant.productID = productID
        grant.quantity = quantity
        grant.purchaseDateMs = purchaseDateMs
        if let expiresDateMs { grant.expiresDateMs = expiresDateMs }
        return grant
    }
}

/// One auto-renewable subscription: what the transactions and Apple's renewal
/// info say about it, kept up to date by the rules.
public struct SubscriptionRecord: Equatable, Sendable {
    public var key: SubscriptionKey
    /// The product of the transaction that gives the latest expiry (after upgrades and crossgrades).
    public var productID: String
    /// The greatest expiry over its live transactions; when revoked, the moment access ended.
    public var expiresDateMs: Int64?
    public var revokedAtMs: Int64?
    public var autoRenew: Bool?
    public var autoRenewProductID: String
    public var expirationIntent: Int32?
    public var billingRetry: Bool
    public var graceExpiresDateMs: Int64?
    public var priceConsentStatus: Int32?
    /// When Apple stated the renewal fields above: older statements (a stale receipt) never overwrite newer ones.
    public var renewalInfoAtMs: Int64
    /// Apple's latest receipt for it, used to refresh it when a notification never came.
    public var latestReceipt: String
    /// The expiry for which `subscription.expired` went out (once per expiry).
    public var expiredEventForMs: Int64?
    public var nextRefreshAtMs: Int64?
    public var refreshAttempts: Int32
    public var updatedAtMs: Int64

    public init(key: SubscriptionKey) {
        self.key = key
        productID = ""
        expiresDateMs = nil
        revokedAtMs = nil
        autoRenew = nil
        autoRenewProductID = ""
        expirationIntent = nil
        billingRetry = false
        graceExpiresDateMs = nil
        priceConsentStatus = nil
        renewalInfoAtMs = 0
        latestReceipt = ""
        expiredEventForMs = nil
        nextRefreshAtMs = nil
        refreshAttempts = 0
        updatedAtMs = 0
    }
}

/// A subscription with the user it is bound to, for entitlement reads.
public struct OwnedSubscription: Equatable, Sendable {
    public var owner: String?
    public var subscription: SubscriptionRecord

    /// The first `limit` of `subscriptions` in the sweeps' order: soonest expiry first.
    static func soonestFirst(_ subscriptions: [OwnedSubscription], limit: Int) -> [OwnedSubscription] {
        Array(
            subscriptions.sorted {
                let (a, b) = ($0.subscription, $1.subscription)
                return (a.expiresDateMs ?? .min, StoredEnvironment.name(a.key.environment), a.key.originalTransactionID)
                    < (b.expiresDateMs ?? .min, StoredEnvironment.name(b.key.environment), b.key.originalTransactionID)
            }.prefix(limit))
    }
}
