/// Send Consumption Information (`PUT /inApps/v1/transactions/consumption/{transactionId}`),
/// the answer to a CONSUMPTION_REQUEST notification: how much of a refunded
/// purchase the customer used. Apple answers 202 with no body. Each number
/// is one of Apple's documented values (ConsumptionStatus, Platform,
/// DeliveryStatus, AccountTenure, PlayTime, LifetimeDollars*, UserStatus,
/// RefundPreference).
public struct ConsumptionRequest: Codable, Sendable, Equatable {
    /// Must be true: the customer agreed to share the data.
    public var customerConsented: Bool?
    public var consumptionStatus: Int32?
    public var platform: Int32?
    public var sampleContentProvided: Bool?
    public var deliveryStatus: Int32?
    /// The app's account token (a UUID), or empty when there is none (Apple wants the field).
    public var appAccountToken: String
    public var accountTenure: Int32?
    public var playTime: Int32?
    public var lifetimeDollarsRefunded: Int32?
    public var lifetimeDollarsPurchased: Int32?
    public var userStatus: Int32?
    public var refundPreference: Int32?

    public init(
        customerConsented: Bool?, consumptionStatus: Int32? = nil, platform: Int32? = nil,
        sampleContentProvided: Bool? = nil, deliveryStatus: Int32? = nil, appAccountToken: String = "",
        accountTenure: Int32? = nil, playTime: Int32? = nil, lifetimeDollarsRefunded: Int32? = nil,
        lifetimeDollarsPurchased: Int32? = nil, userStatus: Int32? = nil, refundPreference: Int32? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }
}
