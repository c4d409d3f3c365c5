import Contracts

/// Reads Apple's per-subscription renewal info: iOS 7's `pending_renewal_info`
/// entries, or the top-level fields of an iOS 6 answer.
enum PendingRenewalReader {
    static func read(_ json: JSONValue, originalTransactionID fallback: String?) -> PendingRenewal? {
        var p = PendingRenewal()
        p.originalTransactionID = json["original_transaction_id"]?.text ?? fallback ?? ""
        p.productID = json["product_id"]?.text ?? ""
        p.autoRenewProductID = json["auto_renew_product_id"]?.text ?? ""
        if let status = json["auto_renew_status"]?.bool { p.autoRenewStatus = status }
        if let intent = json["expiration_intent"]?.int64 { p.expirationIntent = Int32(clamping: intent) }
        if let retry = json["is_in_billing_retry_period"]?.bool { p.isInBillingRetryPeriod = retry }
        if let grace = TransactionReader.milliseconds(json, "grace_period_expires_date") {
            p.gracePeriodExpiresDateMs = grace
        }
        if let consent = json["price_consent_status"]?.int64 { p.priceConsentStatus = Int32(clamping: consent) }
        p.offerCodeRefName = json["offer_code_ref_name"]?.text ?? ""
        let saysSomething = p.hasAutoRenewStatus || p.hasExpirationIntent || p.hasIsInBillingRetryPeriod
            || !p.autoRenewProductID.isEmpty
        return saysSomething ? p : nil
    }
}
