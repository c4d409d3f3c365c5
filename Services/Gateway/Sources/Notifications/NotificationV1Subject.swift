import Contracts
import AppleFormats

/// Which subscription a version 1 notification is about. Real bodies often
/// name no `original_transaction_id`, and their `unified_receipt` holds every
/// subscription of the account, in several groups: the first
/// `pending_renewal_info` entry is not necessarily the subject, and taking it
/// would land one group's auto-renew change or REVOKE on another.
enum NotificationV1Subject {
    /// The subject's original transaction id; nil when the body does not say
    /// which one it is (the ledger then applies nothing to "the" subscription,
    /// and the refresh settles it).
    static func originalTransactionID(of body: JSONValue, receipt: VerifyResult?) -> String? {
        if let named = body["original_transaction_id"]?.text, !named.isEmpty { return named }
        // Older bodies carry the subject transaction itself at the top level.
        for field in ["latest_receipt_info", "latest_expired_receipt_info"] {
            if let subject = body[field]?.object, let named = subject["original_transaction_id"]?.text, !named.isEmpty {
                return named
            }
        }
        let renewals = receipt?.pendingRenewals ?? []
        let transactions = receipt?.transactions ?? []
        if let product = body["auto_renew_product_id"]?.text ?? body["product_id"]?.text, !product.isEmpty {
            let renewing = renewals.filter { $0.autoRenewProductID == product || $0.productID == product }
                .map(\.originalTransactionID)
            let bought = transactions.filter { $0.productID == product }.map(originalID)
            if let only = single(renewing + bought) { return only }
        }
        return single(renewals.map(\.originalTransactionID) + transactions.map(originalID))
    }

    private static func originalID(_ transaction: Transaction) -> String {
        transaction.originalTransactionID.isEmpty ? transaction.transactionID : transaction.originalTransactionID
    }

    /// The one distinct non-empty id, or nil.
    private static func single(_ ids: [String]) -> String? {
        let distinct = Set(ids.filter { !$0.isEmpty })
        return distinct.count == 1 ? distinct.first : nil
    }
}
