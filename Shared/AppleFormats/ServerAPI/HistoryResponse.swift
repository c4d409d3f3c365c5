/// Get Transaction History, version 2 (`GET /inApps/v2/history/{transactionId}`):
/// one page of the customer's transactions for the app. `revision` asks for
/// the next page (and, on the last page, for whatever changes later);
/// `hasMore` says whether another page follows.
public struct HistoryResponse: Codable, Sendable, Equatable {
    public var revision: String?
    public var hasMore: Bool?
    public var bundleId: String?
    /// The app's Apple ID; production answers carry it.
    public var appAppleId: Int64?
    /// `Production` or `Sandbox`.
    public var environment: String?
    public var signedTransactions: [String]?

    public init(
        revision: String?, hasMore: Bool?, bundleId: String?, appAppleId: Int64?, environment: String?,
        signedTransactions: [String]?
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}

/// Get Refund History, version 2 (`GET /inApps/v2/refund/lookup/{transactionId}`):
/// one page of the customer's refunded transactions, paginated as the history is.
public struct RefundHistoryResponse: Codable, Sendable, Equatable {
    public var signedTransactions: [String]?
    public var revision: String?
    public var hasMore: Bool?

    public init(signedTransactions: [String]?, revision: String?, hasMore: Bool?) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
