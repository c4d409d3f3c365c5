import Contracts

/// Consumption information (`STOREKEEPER_SEND_CONSUMPTION_INFO`): written in
/// the same savepoint as the CONSUMPTION_REQUEST that asks for it, so a crash
/// never loses one; sent by the ledger's `ConsumptionSender` through the
/// verifier pool, each attempt pushing the next one out first (as refreshes).
enum ConsumptionRules {
    /// Apple waits 12 hours for the answer; later ones are of no use.
    static let answerWithinMs: Int64 = 12 * 60 * 60_000

    /// What to send about the notification's transaction, read before the
    /// notification changes anything (whether the ledger had credited it);
    /// nil when it names no transaction (version 1 names none).
    static func information(for notification: NotificationApply, _ context: RuleContext) throws -> ConsumptionInfoRequest? {
        guard notification.version == .v2, let transaction = notification.transactions.first else { return nil }
        let stored = StoredTransaction(transaction, environment: notification.environment)
        let credited = try context.session.transaction(stored.key)?.grantedTo != nil
        let user = try context.session.owner(of: stored.subscriptionKey)
        let firstBound = try user.flatMap { try context.session.firstBindingAtMs(of: $0) }
        let spend = try user.map { try context.session.lifetimeSpend(of: $0, in: notification.environment) }
        return ConsumptionInformation.request(
            for: transaction, in: notification.environment, credited: credited, firstBoundAtMs: firstBound, spend: spend,
            now: context.now)
    }

    static func queue(_ request: ConsumptionInfoRequest, _ context: RuleContext) throws {
        try context.session.saveConsumption(
            PendingConsumption(
                key: TransactionKey(request.environment, request.transactionID), request: request,
                requestedAtMs: context.now, nextAttemptAtMs: context.now, attempts: 0))
    }

    /// The information due now, each one's next attempt pushed out before
    /// it is sent; what Apple no longer waits for is dropped.
    static func claim(limit: Int, _ context: RuleContext) throws -> [PendingConsumption] {
        var claimed: [PendingConsumption] = []
        for var pending in try context.session.consumptionsDue(now: context.now, limit: limit) {
            guard context.now - pending.requestedAtMs < answerWithinMs else {
                try context.session.deleteConsumption(pending.key)
                continue
            }
            pending.attempts += 1
            pending.nextAttemptAtMs = context.now + backoffMs(attempt: pending.attempts)
            try context.session.saveConsumption(pending)
            claimed.append(pending)
        }
        return claimed
    }

    /// Half a minute after the first attempt, doubling, at most an hour apart.
    static func backoffMs(attempt: Int32) -> Int64 {
        min(Int64(30_000) << Int64(min(max(attempt - 1, 0), 20)), 60 * 60_000)
    }

    /// Sent, or refused by Apple for good: nothing more to do.
    static func done(_ key: TransactionKey, _ context: RuleContext) throws {
        try context.session.deleteConsumption(key)
    }
}
