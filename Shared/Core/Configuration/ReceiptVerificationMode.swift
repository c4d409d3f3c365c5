/// How the verifiers answer POST /v1/receipts (`STOREKEEPER_RECEIPT_VERIFICATION`).
public enum ReceiptVerificationMode: String, CaseIterable, Sendable {
    /// Apple's verifyReceipt, which checks the receipt's signature and answers
    /// for it. The default: the receipt is evidence, and only the shared
    /// secret is needed.
    case verifyReceipt = "verify_receipt"
    /// The receipt read locally for its transaction ids (its signature not
    /// checked), its purchases taken from the App Store Server API's signed
    /// history. Needs the Server API's credentials.
    case serverAPI = "server_api"
}

extension StorekeeperConfiguration {
    /// `server_api` without the Server API's credentials would answer every
    /// receipt with an error: the verifiers (and `storekeeper up`, without the
    /// simulator) refuse to start instead, naming the setting.
    public func requireServerAPIForReceipts() throws(ConfigurationError) {
        guard apple.receiptVerification == .serverAPI, serverAPI == nil else { return }
        typealias V = ConfigurationVariable
        throw ConfigurationError(
            variable: V.receiptVerification.rawValue,
            reason: "server_api reads receipts with the App Store Server API: set \(V.appleIssuerID.rawValue), \(V.appleKeyID.rawValue) and \(V.applePrivateKeyFile.rawValue), or use verify_receipt")
    }
}
