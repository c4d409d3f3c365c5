/// Get Transaction Info (`GET /inApps/v1/transactions/{transactionId}`):
/// the transaction as a JWS the App Store signed (JWSTransaction).
public struct TransactionInfoResponse: Codable, Sendable, Equatable {
    public var signedTransactionInfo: String?

    public init(signedTransactionInfo: String?) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}
