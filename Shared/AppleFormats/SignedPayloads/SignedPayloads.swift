/// The claims of the App Store's signed payloads that Storekeeper uses
/// (Apple: JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload,
/// ResponseBodyV2DecodedPayload). Dates are milliseconds since the epoch;
/// Xcode signs them as fractional numbers, so they decode as Double.
public struct SignedTransactionClaims: Decodable, Sendable {
    public var transactionId: String?
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Double?
    public var originalPurchaseDate: Double?
    public var expiresDate: Double?
    public var quantity: Int32?
    public var type: String?
    public var inAppOwnershipType: String?
    public var signedDate: Double?
    public var revocationReason: Int32?
    public var revocationDate: Double?
    public var isUpgraded: Bool?
    public var offerType: Int32?
    public var offerIdentifier: String?
    public var environment: String?
    /// The UUID the app set on the purchase, when it set one.
    public var appAccountToken: String?
    /// What Apple charged, in thousandths of `currency` (ISO 4217); Apple adds both since 2023.
    public var price: Int64?
    public var currency: String?
}

public struct SignedRenewalClaims: Decodable, Sendable {
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    public var autoRenewStatus: Int32?
    public var expirationIntent: Int32?
    public var gracePeriodExpiresDate: Double?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: Int32?
    public var offerType: Int32?
    public var offerIdentifier: String?
    public var signedDate: Double?
    public var environment: String?
}

public struct SignedNotificationClaims: Decodable, Sendable {
    public struct Data: Decodable, Sendable {
        public var bundleId: String?
        /// The app's Apple ID; production data carries it (checked by the Server API client).
        public var appAppleId: Int64?
        public var environment: String?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
        public var status: Int32?
    }

    public var notificationType: String?
    public var subtype: String?
    public var notificationUUID: String?
    public var signedDate: Double?
    public var data: Data?
    /// A summary notification's (RENEWAL_EXTENSION) app and environment, in place of `data`.
    public var summary: Data?
}
