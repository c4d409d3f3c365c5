import Contracts

/// Recomputes one subscription from ALL its stored transactions (never from
/// one message), applies renewal info, saves it, and writes an event for each
/// thing that changed. Deriving expiry from every transaction ever seen is
/// what makes a stale receipt unable to shorten it.
enum SubscriptionReconciler {
    /// - Parameter mayExpire: false when the message gave no expiry for this purchase:
    ///   with no subscription stored either, it is a one-off purchase and there is
    ///   nothing to read (every path that stores an expiry also creates the row).
    static func reconcile(
        _ key: SubscriptionKey, latestReceipt: String, mayExpire: Bool = true, _ context: RuleContext,
        renewal: (SubscriptionRecord) -> RenewalInfo? = { _ in nil }
    ) throws {
        if !mayExpire, try !context.session.hasSubscription(key) { return }
        let old = try context.session.subscription(key)
        let transactions = try context.session.transactions(of: key)
        // One-off purchases (no expiry anywhere) are not subscriptions.
        guard old != nil || transactions.contains(where: { $0.expiresDateMs != nil }) else { return }
        var new = old ?? SubscriptionRecord(key: key)
        let access = SubscriptionAccess(transactions)
        access.apply(to: &new)
        renewal(new)?.apply(to: &new)
        if !latestReceipt.isEmpty { new.latestReceipt = latestReceipt }
        if let expires = new.expiresDateMs, expires > old?.expiresDateMs ?? .min {
            // Renewed: any refresh back-off starts over at the next expiry.
            new.nextRefreshAtMs = nil
            new.refreshAttempts = 0
        }
        var unchanged = old
        unchanged?.updatedAtMs = new.updatedAtMs
        guard new != unchanged else { return }
        new.updatedAtMs = context.now
        try context.session.save(new)
        if let old {
            let plan = PlanChange.between(old, new, currentStart: access.current?.purchaseDateMs, catalog: context.catalog)
            try emitChanges(from: old, to: new, plan: plan, context)
        }
    }

    /// A plan change is one `subscription.changed` (with `change`): an
    /// upgrade that moves the expiry later is not also a renewal.
    private static func emitChanges(
        from old: SubscriptionRecord, to new: SubscriptionRecord, plan: PlanChange?, _ context: RuleContext
    ) throws {
        let owner = try context.session.owner(of: new.key)
        if plan?.atOnce != true, new.revokedAtMs == nil, let previous = old.expiresDateMs, let expires = new.expiresDateMs,
            expires > previous
        {
            try context.emit(.renewed(new, previousExpiry: previous, owner: owner, context.origin))
        }
        var aspects: [String] = []
        if old.autoRenew != new.autoRenew { aspects.append("auto_renew") }
        if old.productID != new.productID || old.autoRenewProductID != new.autoRenewProductID { aspects.append("product") }
        if old.graceExpiresDateMs != new.graceExpiresDateMs { aspects.append("grace") }
        if old.billingRetry != new.billingRetry { aspects.append("billing_retry") }
        if old.priceConsentStatus != new.priceConsentStatus { aspects.append("price_consent") }
        if !aspects.isEmpty {
            try context.emit(.changed(new, aspects: aspects, plan: plan, owner: owner, catalog: context.catalog, context.origin))
        }
    }
}
