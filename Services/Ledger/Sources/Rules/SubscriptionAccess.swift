/// Which of a subscription's transactions gives access, and until when, as
/// Apple applies plan changes. Derived from every stored transaction and
/// Apple's own times only, so the answer is the same whichever order the
/// receipts, signed transactions and notifications arrived in.
///
/// A transaction stops counting at the earliest of:
/// - its expiry;
/// - its cancellation date, when Apple marked it upgraded (`is_upgraded`);
/// - the purchase of any later transaction of the same subscription.
///
/// The last rule is what applies an upgrade (or a crossgrade of the same
/// duration) at once: Apple starts a new transaction inside a period only
/// then, ending that period and refunding the rest of it. A renewal, a queued
/// downgrade or crossgrade, and a resubscription start when the period ends or
/// later, so the rule cuts nothing there. Apple does not always say which
/// transaction was superseded: a StoreKit 2 UPGRADE notification carries only
/// the new one, and the old one's `isUpgraded` may never reach us.
struct SubscriptionAccess: Equatable {
    /// The transaction that gives access (the latest end), and its end.
    var current: StoredTransaction?
    var currentEnd: Int64?
    /// The refunded transaction that would have lasted longest, and until when.
    var lastRefund: StoredTransaction?
    var lastRefundEnd: Int64?

    init(_ transactions: [StoredTransaction]) {
        let starts = transactions.map(\.purchaseDateMs).sorted()
        for transaction in transactions {
            guard let end = Self.end(of: transaction, starts: starts) else { continue }
            if transaction.isRevoked {
                if end > lastRefundEnd ?? .min { (lastRefund, lastRefundEnd) = (transaction, end) }
            } else if end > currentEnd ?? .min
                || (end == currentEnd && transaction.purchaseDateMs > current?.purchaseDateMs ?? .min)
            {
                (current, currentEnd) = (transaction, end)
            }
        }
    }

    /// When `transaction` stops giving access; nil for one without an expiry.
    /// `starts`: every purchase date of the subscription, ascending.
    static func end(of transaction: StoredTransaction, starts: [Int64]) -> Int64? {
        guard var end = transaction.effectiveExpiresDateMs else { return nil }
        if let replaced = firstStart(after: transaction.purchaseDateMs, in: starts) {
            end = min(end, replaced)
        } else if transaction.isUpgraded, transaction.cancellationDateMs == nil {
            // Apple says it was replaced, not when, and the replacement has not
            // arrived yet: it gives nothing rather than a period already refunded.
            end = transaction.purchaseDateMs
        }
        return end
    }

    /// The first value of `sorted` greater than `value` (binary search: a
    /// subscription renewed for years holds hundreds of transactions).
    static func firstStart(after value: Int64, in sorted: [Int64]) -> Int64? {
        var (low, high) = (0, sorted.count)
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count ? sorted[low] : nil
    }

    /// Writes product, expiry and revocation into the subscription. A refund
    /// of what would have lasted longest ends it, at the refund.
    func apply(to s: inout SubscriptionRecord) {
        if let current, let end = currentEnd, end > lastRefundEnd ?? .min {
            s.expiresDateMs = end
            s.productID = current.productID
            s.revokedAtMs = nil
        } else if let lastRefund, let end = lastRefundEnd {
            let ended = lastRefund.cancellationDateMs ?? end
            s.revokedAtMs = ended
            s.expiresDateMs = min(end, ended)
            s.productID = lastRefund.productID
        }
    }
}
