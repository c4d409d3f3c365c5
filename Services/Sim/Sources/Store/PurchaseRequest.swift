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

    enum CodingKeys: String, CodingKey {
        case account, type, environment, period, quantity
        case productID = "product_id"
        case appAccountToken = "app_account_token"
    }
}
