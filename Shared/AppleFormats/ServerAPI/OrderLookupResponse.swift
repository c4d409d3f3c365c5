/// Look Up Order ID (`GET /inApps/v1/lookup/{orderId}`): the transactions of
/// the order on a customer's App Store invoice.
public struct OrderLookupResponse: Codable, Sendable, Equatable {
    /// 0: valid (the order is this app's); 1: invalid (unknown, or another app's).
    public var status: Int32?
    public var signedTransactions: [String]?

    public init(status: Int32?, signedTransactions: [String]?) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}
