import Contracts

/// App Store Server Notifications (version 1 authenticated and read by the
/// gateway, version 2 verified and read by the verifier pool):
/// each is applied at most once, by `original_transaction_id`. Transactions it
/// carries are stored and credited to the purchase's user (or kept unclaimed
/// until one presents the receipt); renewal info updates the subscription.
struct NotificationRule {
    /// A version 2 CONSUMPTION_REQUEST queues consumption information (`ConsumptionRules`).
    var sendsConsumptionInfo = false

    func apply(_ notification: NotificationApply, _ context: RuleContext) throws -> NotificationOutcome {
        guard !notification.notificationID.isEmpty else { throw LedgerFailure.badRequest("notification_id is missing") }
        try RequestValidation.validateEnvironment(notification.environment)
        let environment = notification.environment
        let transactions = TransactionApplier.ordered(notification.transactions)
        let originalID =
            notification.originalTransactionID.isEmpty && !notification.subjectUnknown
            ? transactions.last.map { StoredTransaction.purchaseKey(of: $0, environment: environment).originalTransactionID } ?? ""
            : notification.originalTransactionID
        guard !originalID.isEmpty || notification.subjectUnknown else {
            throw LedgerFailure.badRequest("the notification names no purchase")
        }
        let key = SubscriptionKey(environment, originalID)
        guard
            try context.session.recordNotification(
                id: notification.notificationID, type: notification.notificationType, subscription: key, at: context.now)
        else { return NotificationOutcome.with { $0.applied = false } }

        let type = NotificationType(rawValue: notification.notificationType)
        let statedAt = Self.statedAt(notification, context)
        // Read before the notification's transactions are applied: what the ledger knew when Apple asked.
        let consumption =
            sendsConsumptionInfo && type == .consumptionRequest
            ? try ConsumptionRules.information(for: notification, context) : nil
        var scratch = RecordOutcome()
        var owners: [SubscriptionKey: String?] = [:]
        for transaction in transactions {
            let purchase = StoredTransaction.purchaseKey(of: transaction, environment: environment)
            if owners[purchase] == nil { owners[purchase] = .some(try context.session.owner(of: purchase)) }
            try TransactionApplier.apply(
                transaction, environment: environment, creditTo: owners[purchase] ?? nil, context, into: &scratch)
        }
        // After the transactions: a reversal that arrives before its refund is remembered all the same.
        if type == .refundReversed {
            for transaction in transactions {
                try TransactionApplier.reinstate(transaction, environment: environment, reversedAt: statedAt, context)
            }
        }
        let hasSubject = !notification.subjectUnknown
        if hasSubject, type == .revoke, !transactions.contains(where: { $0.hasCancellationDateMs }) {
            try TransactionApplier.revokeAll(of: key, at: statedAt, context)
        }

        var purchases = RecordRule.purchases(of: transactions, in: environment)
        if hasSubject, !purchases.contains(key) { purchases.append(key) }
        for purchase in purchases {
            let pending = notification.pendingRenewals.first { $0.originalTransactionID == purchase.originalTransactionID }
            let isSubject = hasSubject && purchase == key
            try SubscriptionReconciler.reconcile(purchase, latestReceipt: notification.latestReceipt, context) { stored in
                guard pending != nil || isSubject else { return nil }
                var info = RenewalInfo(stored, asOf: statedAt)
                if let pending { info.overlay(pending) }
                if isSubject { Self.overlay(notification, type: type, pendingGiven: pending != nil, over: stored, on: &info) }
                return info
            }
        }
        if let consumption { try ConsumptionRules.queue(consumption, context) }
        return NotificationOutcome.with { $0.applied = true }
    }

    /// When Apple stated what the notification says: version 2's signedDate;
    /// version 1 has no time of its own, so the time it was received (its
    /// auto_renew_status_change_date is the last toggle's, often months old,
    /// and dates the auto-renew status alone).
    static func statedAt(_ notification: NotificationApply, _ context: RuleContext) -> Int64 {
        if notification.signedDateMs > 0 { return notification.signedDateMs }
        return notification.receivedAtMs > 0 ? notification.receivedAtMs : context.now
    }

    /// What the notification itself states about its subscription, over the renewal info.
    private static func overlay(
        _ notification: NotificationApply, type: NotificationType?, pendingGiven: Bool, over stored: SubscriptionRecord,
        on info: inout RenewalInfo
    ) {
        // Version 1's top-level status is as of its change date: a newer statement stored wins.
        let toggledAt = notification.hasAutoRenewStatusChangeDateMs ? notification.autoRenewStatusChangeDateMs : .max
        if notification.hasAutoRenewStatus, toggledAt >= stored.renewalInfoAtMs { info.autoRenew = notification.autoRenewStatus }
        if !notification.autoRenewProductID.isEmpty { info.autoRenewProductID = notification.autoRenewProductID }
        guard !pendingGiven else { return }
        // Without renewal info, the type alone says what happened to billing.
        switch type {
        case .didFailToRenew:
            info.billingRetry = true
        case .didRecover, .didRenew, .renewal, .interactiveRenewal, .interactiveUpgrade:
            info.billingRetry = false
            info.graceExpiresDateMs = nil
        default:
            break
        }
    }
}

/// Apple's notification types that change more than what their transactions
/// and renewal info state (version 2 types of the same name mean the same;
/// the others, SUBSCRIBED, EXPIRED, GRACE_PERIOD_EXPIRED, OFFER_REDEEMED,
/// PRICE_INCREASE, REFUND_DECLINED, RENEWAL_EXTENDED, carry all they change).
enum NotificationType: String, CaseIterable {
    case initialBuy = "INITIAL_BUY"
    case didRenew = "DID_RENEW"
    case renewal = "RENEWAL"
    case interactiveRenewal = "INTERACTIVE_RENEWAL"
    /// Version 1, as some of Apple's pages and libraries name an upgrade's
    /// notification (Apple itself sends INTERACTIVE_RENEWAL for it): a new
    /// period paid now. Its transactions carry the plan change; the type only
    /// says billing is fine.
    case interactiveUpgrade = "INTERACTIVE_UPGRADE"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case didRecover = "DID_RECOVER"
    case cancel = "CANCEL"
    case refund = "REFUND"
    case revoke = "REVOKE"
    case priceIncreaseConsent = "PRICE_INCREASE_CONSENT"
    case consumptionRequest = "CONSUMPTION_REQUEST"
    /// Version 2 only.
    case refundReversed = "REFUND_REVERSED"
}
