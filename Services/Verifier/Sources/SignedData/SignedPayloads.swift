/// The claims of the App Store's signed payloads that Storekeeper uses
/// (Apple: JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload,
/// ResponseBodyV2DecodedPayload). Dates are milliseconds since the epoch;
/// Xcode signs them as fractional numbers, so they decode as Double.
struct SignedTransactionClaims: Decodable {
    var transactionId: String?
    var originalTransactionId: String?
    var webOrderLineItemId: String?
    var bundleId: String?
    var productId: String?
    var subscriptionGroupIdentifier: String?
    var purchaseDate: Double?
    var originalPurchaseDate: Double?
    var expiresDate: Double?
    var quantity: Int32?
    var type: String?
    var inAppOwnershipType: String?
    var signedDate: Double?
    var revocationReason: Int32?
    var revocationDate: Double?
    var isUpgraded: Bool?
    var offerType: Int32?
    var offerIdentifier: String?
    var environment: String?
}

struct SignedRenewalClaims: Decodable {
    var originalTransactionId: String?
    var autoRenewProductId: String?
    var productId: String?
    var autoRenewStatus: Int32?
    var expirationIntent: Int32?
    var gracePeriodExpiresDate: Double?
    var isInBillingRetryPeriod: Bool?
    var priceIncreaseStatus: Int32?
    var offerType: Int32?
    var offerIdentifier: String?
    var signedDate: Double?
    var environment: String?
}

struct SignedNotificationClaims: Decodable {
    struct Data: Decodable {
        var bundleId: String?
        /// The app's Apple ID; production data carries it (checked by the Server API client).
        var appAppleId: Int64?
        var environment: String?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
        var status: Int32?
    }

    var notificationType: String?
    var subtype: String?
    var notificationUUID: String?
    var signedDate: Double?
    var data: Data?
    /// A summary notification's (RENEWAL_EXTENSION) app and environment, in place of `data`.
    var summary: Data?
}
