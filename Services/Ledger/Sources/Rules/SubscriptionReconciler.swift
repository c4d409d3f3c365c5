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
        let old = try context.session.subscription(key)
        if old == nil, !mayExpire { return }
        let transactions = try context.session.transactions(of: key)
        // One-off purchases (no expiry anywhere) are not subscriptions.
        guard old != nil || transactions.contains(where: { $0.expiresDateMs != nil }) else { return }
        var new = old ?? SubscriptionRecord(key: key)
        applyTransactions(transactions, to: &new)
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
        if let old { try emitChanges(from: old, to: new, context) }
    }

    /// Expiry is the greatest expiry over live transactions; a refund of the
    /// transaction that gave the latest expiry ends the subscription. A
    /// transaction replaced by an upgrade counts until its cancellation date,
    /// or, when Apple gave none, until the next purchase of the subscription
    /// (the upgrade), so the upgraded-to product and its expiry take over at once.
    static func applyTransactions(_ transactions: [StoredTransaction], to s: inout SubscriptionRecord) {
        var best: (transaction: StoredTransaction, expires: Int64)?
        var lastRefund: (transaction: StoredTransaction, expires: Int64)?
        for transaction in transactions {
            if transaction.isRevoked {
                if let expires = transaction.expiresDateMs, expires > lastRefund?.expires ?? .min {
                    lastRefund = (transaction, expires)
                }
            } else if let expires = effectiveExpiry(of: transaction, among: transactions),
                expires > best?.expires ?? .min
                    || (expires == best?.expires && transaction.purchaseDateMs > best?.transaction.purchaseDateMs ?? .min)
            {
                best = (transaction, expires)
            }
        }
        if let best, best.expires > lastRefund?.expires ?? .min {
            s.expiresDateMs = best.expires
            s.productID = best.transaction.productID
            s.revokedAtMs = nil
        } else if let lastRefund {
            let ended = lastRefund.transaction.cancellationDateMs ?? lastRefund.expires
            s.revokedAtMs = ended
            s.expiresDateMs = min(lastRefund.expires, ended)
            s.productID = lastRefund.transaction.productID
        }
    }

    private static func effectiveExpiry(of transaction: StoredTransaction, among all: [StoredTransaction]) -> Int64? {
        guard let expires = transaction.effectiveExpiresDateMs else { return nil }
        guard transaction.isUpgraded, transaction.cancellationDateMs == nil else { return expires }
        let replacedAt = all.lazy.map(\.purchaseDateMs).filter { $0 > transaction.purchaseDateMs }.min()
        return min(expires, replacedAt ?? transaction.purchaseDateMs)
    }

    private static func emitChanges(from old: SubscriptionRecord, to new: SubscriptionRecord, _ context: RuleContext) throws {
        let owner = try context.session.owner(of: new.key)
        if new.revokedAtMs == nil, let previous = old.expiresDateMs, let expires = new.expiresDateMs, expires > previous {
            try context.emit(.renewed(new, previousExpiry: previous, owner: owner, context.origin))
        }
        var aspects: [String] = []
        if old.autoRenew != new.autoRenew { aspects.append("auto_renew") }
        if old.productID != new.productID || old.autoRenewProductID != new.autoRenewProductID { aspects.append("product") }
        if old.graceExpiresDateMs != new.graceExpiresDateMs { aspects.append("grace") }
        if old.billingRetry != new.billingRetry { aspects.append("billing_retry") }
        if old.priceConsentStatus != new.priceConsentStatus { aspects.append("price_consent") }
        if !aspects.isEmpty { try context.emit(.changed(new, aspects: aspects, owner: owner, context.origin)) }
    }
}
