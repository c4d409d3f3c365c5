/// Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{transactionId}`):
/// for each subscription group of the customer, the latest transaction and
/// renewal info of each of its subscriptions.
public struct StatusResponse: Codable, Sendable, Equatable {
    /// `Production` or `Sandbox`.
    public var environment: String?
    public var bundleId: String?
    /// The app's Apple ID; production answers carry it.
    public var appAppleId: Int64?
    public var data: [SubscriptionGroupIdentifierItem]?

    public init(environment: String?, bundleId: String?, appAppleId: Int64?, data: [SubscriptionGroupIdentifierItem]?) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}

/// One subscription group of a `StatusResponse`.
public struct SubscriptionGroupIdentifierItem: Codable, Sendable, Equatable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransactionsItem]?

    public init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransactionsItem]?) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// One subscription's latest state in a `StatusResponse`.
public struct LastTransactionsItem: Codable, Sendable, Equatable {
    /// Apple's subscription status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int32?
    public var originalTransactionId: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(status: Int32?, originalTransactionId: String?, signedTransactionInfo: String?, signedRenewalInfo: String?) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}
