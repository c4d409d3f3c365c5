import Contracts
import StorekeeperCore

/// Record: a user presented a receipt Apple verified. Binds its purchases to
/// the user (by policy), credits each transaction not yet credited, revokes
/// refunded ones, and brings the subscriptions up to date.
struct RecordRule {
    let policy: BindingPolicy
    let view: EntitlementView

    func record(_ request: RecordRequest, _ context: RuleContext) throws -> RecordOutcome {
        try RequestValidation.validateUserID(request.userID)
        let result = request.result
        try RequestValidation.validateEnvironment(result.environment)
        guard !result.transactions.isEmpty else { throw LedgerFailure.noPurchases }
        let user = request.userID
        let transactions = TransactionApplier.ordered(result.transactions)
        let purchases = Self.purchases(of: transactions, in: result.environment)

        // Bindings first. A purchase nobody holds is bound at once; under `keep`, a purchase of
        // another user refuses the whole request, and the unit's rollback undoes those bindings.
        var moves: [(SubscriptionKey, previous: String)] = []
        for key in purchases {
            guard let owner = try context.session.bindIfUnbound(key, to: user, at: context.now), owner != user else {
                continue
            }
            if policy == .keep { throw LedgerFailure.alreadyBound }
            moves.append((key, owner))
        }
        for (key, previous) in moves {
            try context.session.bind(key, to: user, from: previous, at: context.now, requestID: context.origin.requestID)
            try context.emit(.transferred(key, from: previous, to: user, context.origin))
        }

        var outcome = RecordOutcome()
        outcome.userID = user
        for transaction in transactions {
            try TransactionApplier.apply(
                transaction, environment: result.environment, creditTo: user, context, into: &outcome)
        }
        for key in purchases { try TransactionApplier.creditUnclaimed(of: key, to: user, context, into: &outcome) }
        try Self.reconcile(purchases, of: result, context)
        try view.fill(&outcome, user: user, at: context.now, reader: context.session)
        return outcome
    }

    /// The purchases (original transactions) a receipt names, in first-seen order.
    static func purchases(of transactions: [Transaction], in environment: AppleEnvironment) -> [SubscriptionKey] {
        var seen = Set<SubscriptionKey>()
        return transactions.compactMap { transaction in
            let key = StoredTransaction.purchaseKey(of: transaction, environment: environment)
            return seen.insert(key).inserted ? key : nil
        }
    }

    /// Brings each purchase's subscription up to date with the receipt's renewal
    /// info, stated by Apple when it answered.
    static func reconcile(_ purchases: [SubscriptionKey], of result: VerifyResult, _ context: RuleContext) throws {
        let asOf = result.requestDateMs > 0 ? result.requestDateMs : context.now
        let expiring = Set(
            result.transactions.filter(\.hasExpiresDateMs).map {
                StoredTransaction.purchaseKey(of: $0, environment: result.environment)
            })
        for key in purchases {
            let pending = result.pendingRenewals.first { $0.originalTransactionID == key.originalTransactionID }
            try SubscriptionReconciler.reconcile(
                key, latestReceipt: result.latestReceipt, mayExpire: expiring.contains(key), context
            ) { stored in
                guard let pending else { return nil }
                var info = RenewalInfo(stored, asOf: asOf)
                info.overlay(pending)
                return info
            }
        }
    }
}
