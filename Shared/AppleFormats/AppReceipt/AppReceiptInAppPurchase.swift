extension AppReceipt {
    /// One in-app purchase receipt (attribute 17 of an app receipt): the
    /// fields of Apple's "In-App Purchase Receipt Fields" table, by type.
    public struct InAppPurchase: Sendable, Equatable {
        /// 1701.
        public var quantity: Int64?
        /// 1702.
        public var productID: String?
        /// 1703 ("0" in Xcode's receipts).
        public var transactionID: String?
        /// 1704.
        public var purchaseDateMs: Int64?
        /// 1705 (Xcode's receipts leave it out).
        public var originalTransactionID: String?
        /// 1706.
        public var originalPurchaseDateMs: Int64?
        /// 1708: auto-renewable subscriptions only.
        public var expiresDateMs: Int64?
        /// 1711, an integer in the receipt; text here, as verifyReceipt and the contracts carry it.
        public var webOrderLineItemID: String?
        /// 1712: set when Apple refunded or revoked the purchase.
        public var cancellationDateMs: Int64?
        /// 1713: not in Apple's table, but on the App Store's receipts, where it
        /// matches verifyReceipt's `is_trial_period` for the same receipt.
        public var isTrialPeriod: Bool?
        /// 1719.
        public var isInIntroOfferPeriod: Bool?

        public init() {}
    }
}
