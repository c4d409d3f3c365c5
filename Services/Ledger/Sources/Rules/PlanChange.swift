import Contracts

/// A plan change as the `subscription.changed` event reports it, told from
/// the subscription before and after one message was applied: Apple's own
/// signals decide (when the new transaction started, the renewal info's
/// auto-renew product); the catalog's levels only tell a crossgrade from an
/// upgrade or a downgrade, which Apple's data never says (its UPGRADE and
/// DOWNGRADE subtypes cover crossgrades too).
struct PlanChange: Equatable {
    enum Kind: String {
        case upgrade
        case downgradeQueued = "downgrade_queued"
        case downgradeCancelled = "downgrade_cancelled"
        case crossgrade
    }

    var kind: Kind
    var from: String
    var to: String
    /// When it takes effect: the new period's start (at once), the renewal date (queued), 0 (cancelled).
    var effectiveMs: Int64
    /// Took effect now (an upgrade, a crossgrade of the same duration), rather than queued or cancelled.
    var atOnce = false

    /// - Parameter currentStart: the purchase date of the transaction that gives access now.
    static func between(
        _ old: SubscriptionRecord, _ new: SubscriptionRecord, currentStart: Int64?, catalog: ProductCatalog?
    ) -> PlanChange? {
        let same = { (a: String, b: String) in catalog?.sameLevel(a, b) ?? false }
        // At once: the product that gives access changed, and its period began
        // before the old one ended (a renewal to a new product begins after it).
        if !old.productID.isEmpty, new.productID != old.productID, old.revokedAtMs == nil, new.revokedAtMs == nil,
            let start = currentStart, let oldEnd = old.expiresDateMs, start < oldEnd
        {
            return PlanChange(
                kind: same(old.productID, new.productID) ? .crossgrade : .upgrade, from: old.productID, to: new.productID,
                effectiveMs: start, atOnce: true)
        }
        guard new.productID == old.productID, !new.productID.isEmpty else { return nil }
        // Queued for the renewal: the renewal info names another product.
        let renewsTo = new.autoRenewProductID
        if !renewsTo.isEmpty, renewsTo != new.productID, renewsTo != old.autoRenewProductID {
            return PlanChange(
                kind: same(new.productID, renewsTo) ? .crossgrade : .downgradeQueued, from: new.productID, to: renewsTo,
                effectiveMs: new.expiresDateMs ?? 0)
        }
        // Back to the current product: the queued change is cancelled.
        let queued = old.autoRenewProductID
        if !queued.isEmpty, queued != old.productID, renewsTo == new.productID {
            return PlanChange(kind: .downgradeCancelled, from: queued, to: new.productID, effectiveMs: 0)
        }
        return nil
    }
}
