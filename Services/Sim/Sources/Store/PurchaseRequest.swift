import Contracts

/// `POST /admin/purchases`: an Apple account buys a product.
struct PurchaseRequest: Codable, Sendable {
    enum Environment: String, Codable, Sendable {
        case production, sandbox
        var appleEnvironment: AppleEnvironment { self == .sandbox ? .sandbox : .production }
    }

    /// The buyer's Apple account (any label; receipts hold every purchase of their account).
    var account: String
    var productID: String
    var type: SimProductType
    var environment: Environment
    /// Auto-renewable only; default one month.
    var period: SimPeriod?
    var quantity: Int?
    /// StoreKit 2's appAccountToken (a UUID the app sets on the purchase); none by default.
    var appAccountToken: String?
    /// Auto-renewable only: the product's level in its subscription group (1 the highest); optional.
    var level: Int?

    enum CodingKeys: String, CodingKey {
        case account, type, environment, period, quantity, level
        case productID = "product_id"
        case appAccountToken = "app_account_token"
    }
}

/// `POST /admin/plan-changes`: the customer moves a subscription to another
/// product of its group.
struct PlanChangeRequest: Codable, Sendable {
    var originalTransactionID: String
    var productID: String
    var kind: SimPlanChange
    /// The new product's period; default the current one.
    var period: SimPeriod?
    /// The new product's level (1 the highest); when both levels are known they must agree with `kind`.
    var level: Int?

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "original_transaction_id", productID = "product_id", kind, period, level
    }
}
