import Contracts

/// The ledger's own work, not caused by a client: noticing expiries and
/// refreshing subscriptions whose renewal notification never came.
enum MaintenanceRules {
    /// Writes `subscription.expired` once per expiry for each subscription that ran out.
    static func sweepExpired(limit: Int, _ context: RuleContext) throws -> Int {
        let expired = try context.session.subscriptionsNewlyExpired(now: context.now, limit: limit)
        for var owned in expired {
            owned.subscription.expiredEventForMs = owned.subscription.expiresDateMs
            owned.subscription.updatedAtMs = context.now
            try context.session.save(owned.subscription)
            try context.emit(.expired(owned.subscription, owner: owned.owner, context.origin))
        }
        return expired.count
    }

    /// Picks the subscriptions to refresh now and pushes their next attempt out
    /// (before calling Apple, so a crash or a failure never makes a tight loop).
    static func claimRefreshes(limit: Int, withoutReceipt: Bool = false, _ context: RuleContext) throws -> [OwnedSubscription] {
        let due = try context.session.subscriptionsDueForRefresh(now: context.now, limit: limit, withoutReceipt: withoutReceipt)
        return try due.map { owned in
            var owned = owned
            owned.subscription.refreshAttempts += 1
            owned.subscription.nextRefreshAtMs = context.now + refreshBackoffMs(attempt: owned.subscription.refreshAttempts)
            try context.session.save(owned.subscription)
            return owned
        }
    }

    /// One minute after the first miss, doubling, at most a day apart.
    static func refreshBackoffMs(attempt: Int32) -> Int64 {
        let minute: Int64 = 60_000
        return min(minute << Int64(min(max(attempt - 1, 0), 20)), 24 * 60 * minute)
    }

    /// Applies a refresh's verify result for the user the subscription belongs to.
    static func applyRefresh(_ result: VerifyResult, owner: String?, _ context: RuleContext) throws {
        try RequestValidation.validateEnvironment(result.environment)
        var scratch = RecordOutcome()
        let transactions = TransactionApplier.ordered(result.transactions)
        let purchases = RecordRule.purchases(of: transactions, in: result.environment)
        var owners: [SubscriptionKey: String] = [:]
        for key in purchases {
            if let bound = try context.session.owner(of: key) {
                owners[key] = bound
            } else if let owner {
                // The same receipt: the same Apple account, so the same user.
                try context.session.bind(key, to: owner, from: nil, at: context.now, requestID: context.origin.requestID)
                owners[key] = owner
            }
        }
        for transaction in transactions {
            let key = StoredTransaction.purchaseKey(of: transaction, environment: result.environment)
            try TransactionApplier.apply(
                transaction, environment: result.environment, creditTo: owners[key], context, into: &scratch)
        }
        try RecordRule.reconcile(purchases, of: result, context)
    }
}
