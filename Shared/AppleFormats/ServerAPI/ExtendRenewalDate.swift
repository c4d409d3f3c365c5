/// Extend a Subscription Renewal Date (`PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`).
public struct ExtendRenewalDateRequest: Codable, Sendable, Equatable {
    /// 1 to 90.
    public var extendByDays: Int32?
    /// 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public var extendReasonCode: Int32?
    /// The caller's id of this request (at most 128 characters); the same id is the same request.
    public var requestIdentifier: String?

    public init(extendByDays: Int32?, extendReasonCode: Int32?, requestIdentifier: String?) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}

/// The answer to an extension: whether it took and the new renewal date.
public struct ExtendRenewalDateResponse: Codable, Sendable, Equatable {
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var success: Bool?
    /// The new renewal date, milliseconds since the epoch.
    public var effectiveDate: Int64?

    public init(originalTransactionId: String?, webOrderLineItemId: String?, success: Bool?, effectiveDate: Int64?) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}
