import Contracts

/// A subscription's renewal fields as Apple stated them at one moment. Built
/// from what is stored, then overlaid with what a receipt or notification
/// says, so fields a message does not carry keep their value.
struct RenewalInfo: Equatable {
    var asOfMs: Int64
    var autoRenew: Bool?
    var autoRenewProductID: String
    var expirationIntent: Int32?
    var billingRetry: Bool
    var graceExpiresDateMs: Int64?
    var priceConsentStatus: Int32?

    init(_ s: SubscriptionRecord, asOf: Int64) {
        asOfMs = asOf
        autoRenew = s.autoRenew
        autoRenewProductID = s.autoRenewProductID
        expirationIntent = s.expirationIntent
        billingRetry = s.billingRetry
        graceExpiresDateMs = s.graceExpiresDateMs
        priceConsentStatus = s.priceConsentStatus
    }

    /// Apple's pending_renewal_info entry is a whole statement: what it leaves out is not the case.
    mutating func overlay(_ pending: PendingRenewal) {
        if pending.hasAutoRenewStatus { autoRenew = pending.autoRenewStatus }
        if !pending.autoRenewProductID.isEmpty { autoRenewProductID = pending.autoRenewProductID }
        expirationIntent = pending.hasExpirationIntent ? pending.expirationIntent : nil
        billingRetry = pending.hasIsInBillingRetryPeriod && pending.isInBillingRetryPeriod
        graceExpiresDateMs = pending.hasGracePeriodExpiresDateMs ? pending.gracePeriodExpiresDateMs : nil
        priceConsentStatus = pending.hasPriceConsentStatus ? pending.priceConsentStatus : nil
    }

    /// Writes the fields unless what is stored was stated later (a stale receipt never wins).
    func apply(to s: inout SubscriptionRecord) {
        guard asOfMs >= s.renewalInfoAtMs else { return }
        s.renewalInfoAtMs = asOfMs
        s.autoRenew = autoRenew
        s.autoRenewProductID = autoRenewProductID
        s.expirationIntent = expirationIntent
        s.billingRetry = billingRetry
        s.graceExpiresDateMs = graceExpiresDateMs
        s.priceConsentStatus = priceConsentStatus
    }
}
