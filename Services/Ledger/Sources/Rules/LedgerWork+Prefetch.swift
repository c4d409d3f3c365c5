import Contracts

extension LedgerRules {
    /// The rows `works` will read: every transaction they carry, the purchases
    /// those belong to, the users whose entitlements a record shows, and the
    /// notifications and Idempotency-Keys they check.
    public func prefetch(for works: some Sequence<LedgerWork>) -> LedgerPrefetch {
        var prefetch = LedgerPrefetch()
        prefetch.listedProducts = view.listedProducts
        func add(_ transactions: [Transaction], in environment: AppleEnvironment) {
            for transaction in transactions {
                let stored = StoredTransaction(transaction, environment: environment)
                prefetch.transactions.insert(stored.key)
                prefetch.purchases.insert(stored.subscriptionKey)
            }
        }
        for work in works {
            switch work {
            case .record(let request):
                prefetch.users.insert(request.userID)
                add(request.result.transactions, in: request.result.environment)
                if request.hasIdempotency {
                    prefetch.answers.insert(.init(scope: request.idempotency.scope, key: request.idempotency.key))
                }
            case .notification(let notification):
                prefetch.notificationIDs.insert(notification.notificationID)
                add(notification.transactions, in: notification.environment)
                if !notification.originalTransactionID.isEmpty {
                    prefetch.purchases.insert(SubscriptionKey(notification.environment, notification.originalTransactionID))
                }
            case .refreshResult(let result, let owner):
                add(result.transactions, in: result.environment)
                if let owner { prefetch.users.insert(owner) }
            case .claimRefreshes, .sweepExpired, .pruneEvents, .pruneIdempotentAnswers, .claimCatchUp, .releaseCatchUp,
                .claimConsumptions, .consumptionDone:
                prefetch.readsBeyondKeys = true
            }
        }
        return prefetch
    }
}
