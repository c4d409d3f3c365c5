import Contracts

/// What the simulator sells.
public enum SimProductType: String, Codable, Sendable, CaseIterable {
    case consumable
    case nonConsumable = "non_consumable"
    /// A subscription that does not renew: in the receipt with no expiry (its length is the app's to know).
    case nonRenewing = "non_renewing"
    case autoRenewable = "auto_renewable"
}

/// A subscription period, in Apple's two clocks: real (production) and
/// accelerated (sandbox: a week is 3 minutes, a month 5, a year an hour).
public enum SimPeriod: String, Codable, Sendable, CaseIterable {
    case week = "P1W"
    case month = "P1M"
    case twoMonths = "P2M"
    case threeMonths = "P3M"
    case sixMonths = "P6M"
    case year = "P1Y"

    public func milliseconds(in environment: AppleEnvironment) -> Int64 {
        let minute: Int64 = 60_000
        let day: Int64 = 86_400_000
        if environment == .sandbox {
            return switch self {
            case .week: 3 * minute
            case .month: 5 * minute
            case .twoMonths: 10 * minute
            case .threeMonths: 15 * minute
            case .sixMonths: 30 * minute
            case .year: 60 * minute
            }
        }
        return switch self {
        case .week: 7 * day
        case .month: 30 * day
        case .twoMonths: 60 * day
        case .threeMonths: 91 * day
        case .sixMonths: 182 * day
        case .year: 365 * day
        }
    }
}

/// One purchase or renewal.
struct SimTransaction: Sendable {
    let id: String
    /// The Apple account (per environment) that made it.
    let account: String
    let environment: AppleEnvironment
    let originalID: String
    let productID: String
    let type: SimProductType
    let quantity: Int
    let purchaseMs: Int64
    let originalPurchaseMs: Int64
    /// Moved later by a renewal-date extension.
    var expiresMs: Int64?
    let webOrderLineItemID: String?
    /// The id on the customer's invoice (Look Up Order ID).
    let orderID: String
    /// The store's change counter when this transaction last changed (the Server API's history revisions).
    var revision: Int64
    var cancellationMs: Int64?
    var cancellationReason: Int?
    /// The UUID the app set on the purchase (StoreKit 2's appAccountToken); renewals keep it.
    var appAccountToken: String? = nil
    /// When a plan change at once (an upgrade, a crossgrade of the same
    /// period) replaced it: Apple marks it `is_upgraded` / `isUpgraded`.
    var upgradedMs: Int64? = nil
    /// Bought by the customer (the first purchase, a plan change at once), not a renewal.
    var customerPurchase = false
}

/// One auto-renewable subscription of one Apple account.
struct SimSubscription: Sendable {
    /// A plan the subscription renews to at its next renewal (a downgrade, a crossgrade of another period).
    struct Plan: Sendable, Equatable {
        var productID: String
        var period: SimPeriod
        var level: Int?
    }

    let originalID: String
    /// The current plan: changed at once by an upgrade, at a renewal by a queued change.
    var productID: String
    var period: SimPeriod
    /// Its level in the subscription group (1 the highest), when the buyer named one.
    var level: Int?
    var pending: Plan?
    let environment: AppleEnvironment
    let account: String
    var autoRenew: Bool
    var renewals: Int
    var expirationIntent: Int?
    /// Transaction ids, oldest first.
    var transactionIDs: [String]

    /// What Apple's renewal info names as `auto_renew_product_id`.
    var autoRenewProductID: String { pending?.productID ?? productID }
}

/// A receipt the simulator minted: an app receipt of one account, as of its minting.
struct SimReceipt: Sendable {
    let account: String
    let environment: AppleEnvironment
    let createdMs: Int64
    let transactionIDs: [String]
}

/// A server notification to send (as version 1 or version 2).
public struct SimNotification: Sendable, Equatable {
    public let type: String
    public let originalTransactionID: String
    public let environment: AppleEnvironment
    /// The transaction it is about (a renewal, a refunded one); nil: the subscription's latest.
    public var transactionID: String? = nil
    /// Version 2's subtype, when the change says it (DID_CHANGE_RENEWAL_PREF's UPGRADE or DOWNGRADE).
    public var subtype: String? = nil
    /// The version 1 type when it differs: Apple sends INTERACTIVE_RENEWAL for an upgrade.
    public var version1Type: String? = nil
}
