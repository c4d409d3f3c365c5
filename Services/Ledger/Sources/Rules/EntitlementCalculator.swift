import Contracts

/// A purchase's entitlement at a moment: computed when asked, so an expiry
/// that passed shows as expired with no write and no new verification.
public enum EntitlementCalculator {
    public static func state(_ s: SubscriptionRecord, at now: Int64) -> EntitlementState {
        if s.revokedAtMs != nil { return .revoked }
        if let expires = s.expiresDateMs, expires > now { return .active }
        if let grace = s.graceExpiresDateMs, grace > now { return .grace }
        if s.billingRetry { return .billingRetry }
        return .expired
    }

    /// An auto-renewable subscription's entitlement; with a catalog, also the
    /// access its renewal product unlocks ("your plan changes to X on D").
    public static func entitlement(_ s: SubscriptionRecord, at now: Int64, catalog: ProductCatalog? = nil) -> Entitlement {
        let state = state(s, at: now)
        var entitlement = Entitlement()
        entitlement.kind = .autoRenewable
        entitlement.productID = s.productID
        entitlement.originalTransactionID = s.key.originalTransactionID
        entitlement.environment = s.key.environment
        if let expires = s.expiresDateMs { entitlement.expiresDateMs = expires }
        entitlement.active = state == .active || state == .grace
        entitlement.autoRenew = s.autoRenew ?? false
        entitlement.autoRenewProductID = s.autoRenewProductID
        entitlement.autoRenewAccess = catalog?[s.autoRenewProductID]?.access ?? []
        entitlement.state = state
        return entitlement
    }

    /// A one-off purchase's entitlement (its transactions, one purchase): a
    /// non-consumable is active until refunded; a non-renewing subscription
    /// lasts the catalog's duration from its purchase. nil for consumables
    /// and for products of unknown kind (StoreKit 2's type, else the catalog).
    public static func entitlement(
        _ purchase: [StoredTransaction], catalog: ProductCatalog?, at now: Int64
    ) -> Entitlement? {
        let live = purchase.filter { !$0.isRevoked }
        guard let chosen = live.last ?? purchase.last else { return nil }
        let product = catalog?[chosen.productID]
        guard let kind = chosen.kind ?? product?.kind, kind == .nonConsumable || kind == .nonRenewing else { return nil }
        var entitlement = Entitlement()
        entitlement.kind = kind
        entitlement.productID = chosen.productID
        entitlement.originalTransactionID = chosen.originalTransactionID
        entitlement.environment = chosen.key.environment
        let expires = kind == .nonRenewing ? product?.duration?.added(to: chosen.purchaseDateMs) : nil
        if let expires { entitlement.expiresDateMs = expires }
        entitlement.state =
            if live.isEmpty { .revoked } else if let expires, expires <= now { .expired } else { .active }
        entitlement.active = entitlement.state == .active
        return entitlement
    }
}
