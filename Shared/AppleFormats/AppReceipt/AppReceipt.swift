/// An app receipt (the PKCS#7 `appStoreReceiptURL` file a client sends as
/// `receipt-data`), as `AppReceiptParser` reads it from its container: the
/// fields Apple documents in "Receipt Fields", and nothing verified (see the
/// parser). Dates are milliseconds since the epoch, as everywhere else in
/// Storekeeper; a field the receipt does not carry is nil.
public struct AppReceipt: Sendable, Equatable {
    /// Attribute 0: "Production", "ProductionSandbox", "Xcode", ... (not in Apple's table, but in every receipt).
    public var receiptType: String?
    /// Attribute 2: the app's bundle identifier.
    public var bundleID: String?
    /// Attribute 3: the app's build (`CFBundleVersion`).
    public var appVersion: String?
    /// Attribute 19: the build the user first bought or downloaded.
    public var originalAppVersion: String?
    /// Attribute 12: when the App Store (or Xcode) made this receipt.
    public var creationDateMs: Int64?
    /// Attribute 18: when the user first bought or downloaded the app.
    public var originalPurchaseDateMs: Int64?
    /// Attribute 21: a volume-purchase receipt's expiry (Xcode writes year 4001).
    public var expirationDateMs: Int64?
    /// Attribute 17, once per purchase, in the receipt's order (not chronological).
    public var inAppPurchases: [InAppPurchase] = []

    public init() {}

    /// The in-app purchases' transaction ids, in the receipt's order.
    public var transactionIDs: [String] { inAppPurchases.compactMap(\.transactionID) }

    /// One transaction id to ask the App Store Server API about, as Apple's
    /// `ReceiptUtility.extractTransactionId` picks it: the first purchase's
    /// transaction id, or its original one. Any id of the customer serves the
    /// transaction history; nil when the receipt holds no purchase.
    public var anyTransactionID: String? {
        inAppPurchases.lazy.compactMap { $0.transactionID ?? $0.originalTransactionID }.first
    }
}
