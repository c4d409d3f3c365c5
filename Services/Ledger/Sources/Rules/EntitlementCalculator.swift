import Contracts

/// A subscription's state at a moment: computed when asked, so an expiry that
/// passed shows as expired with no write and no new verification.
public enum EntitlementCalculator {
    public static func state(_ s: SubscriptionRecord, at now: Int64) -> EntitlementState {
        if s.revokedAtMs != nil { return .revoked }
        if let expires = s.expiresDateMs, expires > now { return .active }
        if let grace = s.graceExpiresDateMs, grace > now { return .grace }
        if s.billingRetry { return .billingRetry }
        return .expired
    }

    public static func entitlement(_ s: SubscriptionRecord, at now: Int64) -> Entitlement {
        let state = state(s, at: now)
        var entitlement = Entitlement()
        entitlement.productID = s.productID
        entitlement.originalTransactionID = s.key.originalTransactionID
        entitlement.environment = s.key.environment
        if let expires = s.expiresDateMs { entitlement.expiresDateMs = expires }
        entitlement.active = state == .active || state == .grace
        entitlement.autoRenew = s.autoRenew ?? false
        entitlement.state = state
        return entitlement
    }
}
