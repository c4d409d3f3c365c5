import Contracts

/// Stores one transaction Apple reported and credits it at most once ever:
/// the heart of dedup, shared by records, notifications and refreshes.
enum TransactionApplier {
    /// - Parameter user: who gets the credit; nil records the transaction unclaimed
    ///   (a notification about a purchase no user presented yet), to be credited later.
    static func apply(
        _ transaction: Transaction, environment: AppleEnvironment, creditTo user: String?, _ context: RuleContext,
        into outcome: inout RecordOutcome
    ) throws {
        let incoming = StoredTransaction(transaction, environment: environment)
        // The common case first: a transaction never seen, stored with its credit and event at once.
        var new = incoming
        if !new.isRevoked, let user {
            new.grantedTo = user
            new.grantedAtMs = context.now
            if try context.session.insertIfNew(new, creditedBy: .granted(new, to: user, context.origin)) != nil {
                outcome.granted.append(new.grant)
                return
            }
        } else if try context.session.insertIfNew(new) {
            if new.isRevoked { outcome.revoked.append(revocation(new)) }
            return
        }
        guard var stored = try context.session.transaction(incoming.key) else { return }
        var changed = false
        // A cancellation learned now: a refund revokes the credit; an upgrade only marks it replaced.
        // A refund Apple dated before a reversal it stated later is the reversed one: stale.
        if let cancelled = incoming.cancellationDateMs, stored.cancellationDateMs == nil, !stored.refundWasReversed(cancelled) {
            stored.cancellationDateMs = cancelled
            stored.cancellationReason = incoming.cancellationReason
            stored.isUpgraded = stored.isUpgraded || incoming.isUpgraded
            changed = true
            if stored.isRevoked, stored.grantedTo != nil { try context.emit(.revoked(stored, context.origin)) }
        }
        // StoreKit 2 says what the product is; verifyReceipt never does.
        if let kind = incoming.kind, stored.kind == nil {
            stored.kind = kind
            changed = true
        }
        // So does its price: the lifetime spend consumption information reports.
        if let price = incoming.priceMilliunits, stored.priceMilliunits == nil {
            stored.priceMilliunits = price
            stored.currency = incoming.currency
            changed = true
        }
        // Replaced by an upgrade, learned after the transaction (Apple may state it without a
        // cancellation date): from now on it counts only until it was replaced.
        if incoming.isUpgraded, !stored.isUpgraded {
            stored.isUpgraded = true
            changed = true
        }
        // The same transaction with a later expiry: Apple extended the period (RENEWAL_EXTENDED, or a
        // receipt after an extension), or gave one where it was first stored without. Only ever later,
        // so stale input never shortens a subscription.
        if !stored.isRevoked, let expires = incoming.expiresDateMs, expires > stored.expiresDateMs ?? .min {
            stored.expiresDateMs = expires
            changed = true
        }
        if stored.isRevoked {
            outcome.revoked.append(revocation(stored))
        } else if stored.grantedTo == nil, let user {
            stored.grantedTo = user
            stored.grantedAtMs = context.now
            changed = true
            outcome.granted.append(stored.grant)
            try announceCredit(stored, to: user, context)
        } else if stored.grantedTo != nil {
            outcome.alreadyGranted.append(stored.key.transactionID)
        }
        if changed { try context.session.update(stored) }
    }

    /// Apple reversed a refund (version 2 REFUND_REVERSED, which states the
    /// transaction without its revocation) at `reversedAt` (its signedDate):
    /// it counts again, for the user who holds the purchase now (after a
    /// transfer, not the first one credited), who is told by a new
    /// `transaction.granted`. The reversal is remembered, so the reversed
    /// refund arriving late (under another notification id, or in an older
    /// receipt) never revokes it again; a refund Apple dates after the
    /// reversal still does.
    static func reinstate(
        _ transaction: Transaction, environment: AppleEnvironment, reversedAt: Int64, _ context: RuleContext
    ) throws {
        guard !transaction.hasCancellationDateMs,
            var stored = try context.session.transaction(TransactionKey(environment, transaction.transactionID))
        else { return }
        stored.reinstatedAtMs = max(stored.reinstatedAtMs ?? .min, reversedAt)
        guard stored.isRevoked, let cancelled = stored.cancellationDateMs, stored.refundWasReversed(cancelled) else {
            return try context.session.update(stored)
        }
        stored.cancellationDateMs = nil
        stored.cancellationReason = nil
        let holder = try context.session.owner(of: stored.subscriptionKey) ?? stored.grantedTo
        if let holder {
            stored.grantedTo = holder
            stored.grantedAtMs = context.now
        }
        try context.session.update(stored)
        if let holder { try announceCredit(stored, to: holder, context) }
    }

    /// Credits to `user` the purchase's transactions nobody claimed yet (seen
    /// first in a notification, before the purchase was bound): binding a
    /// purchase gives its user everything of it, whichever message came first.
    static func creditUnclaimed(
        of purchase: SubscriptionKey, to user: String, _ context: RuleContext, into outcome: inout RecordOutcome
    ) throws {
        for var stored in try context.session.unclaimedTransactions(of: purchase) {
            stored.grantedTo = user
            stored.grantedAtMs = context.now
            try context.session.update(stored)
            outcome.granted.append(stored.grant)
            try announceCredit(stored, to: user, context)
        }
    }

    /// Revokes every live transaction of a purchase (Apple's REVOKE: family sharing ended).
    static func revokeAll(of subscription: SubscriptionKey, at cancelled: Int64, _ context: RuleContext) throws {
        for var stored in try context.session.transactions(of: subscription)
        where stored.cancellationDateMs == nil && !stored.refundWasReversed(cancelled) {
            stored.cancellationDateMs = cancelled
            try context.session.update(stored)
            if stored.grantedTo != nil { try context.emit(.revoked(stored, context.origin)) }
        }
    }

    /// `transaction.granted`, and its seq kept with the transaction: the order
    /// and cursor of the user's transaction list (GET /v1/users/{id}/transactions).
    private static func announceCredit(_ transaction: StoredTransaction, to user: String, _ context: RuleContext) throws {
        let event = try context.emit(.granted(transaction, to: user, context.origin))
        try context.session.setGrantedSeq(transaction.key, seq: event.seq)
    }

    private static func revocation(_ transaction: StoredTransaction) -> Revocation {
        Revocation.with {
            $0.transactionID = transaction.key.transactionID
            $0.cancellationDateMs = transaction.cancellationDateMs ?? 0
        }
    }

    /// Apple's order is not promised; crediting oldest first keeps events in purchase order.
    static func ordered(_ transactions: [Transaction]) -> [Transaction] {
        transactions.sorted { ($0.purchaseDateMs, $0.transactionID) < ($1.purchaseDateMs, $1.transactionID) }
    }
}
