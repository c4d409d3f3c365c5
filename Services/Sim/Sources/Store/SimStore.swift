import Contracts
import Foundation
import StorekeeperCore

/// The simulator's state: accounts' transactions, subscriptions and the
/// receipts it minted. A value type; every method takes the simulated `now`,
/// so renewals and expiry are exact in tests.
struct SimStore: Sendable {
    struct Purchase: Sendable, Equatable {
        let receiptData: String
        let transactionID: String
        let originalTransactionID: String
        let expiresMs: Int64?
        let orderID: String
    }

    enum Failure: Error, Equatable {
        case unknownTransaction
        case unknownSubscription
        case alreadyOwned
        /// A plan change of a subscription not active now, or to the plan it has.
        case notChangeable
        /// The levels named contradict the change (an upgrade to a lower level, say).
        case levelMismatch
        /// A renewal-date extension of a subscription that is not active now (expired or refunded).
        case notExtendable
    }

    /// Apple's sandbox stops renewing after this many renewals.
    static let sandboxRenewalLimit = 5

    /// The app its receipts are of.
    let bundleID: String
    private(set) var transactions: [String: SimTransaction] = [:]
    private(set) var subscriptions: [String: SimSubscription] = [:]
    private var receipts: [String: SimReceipt] = [:]
    private var accountTransactions: [String: [String]] = [:]
    /// Per account: how many transactions its newest receipt holds, and that receipt.
    private var latestReceipt: [String: (Int, String)] = [:]
    private var nextID: Int64 = 0
    /// Counts changes of transactions: each new or changed one takes the next value.
    private var lastRevision: Int64 = 0
    /// Order id (from the invoice) to transaction id.
    private(set) var orders: [String: String] = [:]
    /// No renewal can fall due before this: every verifyReceipt asks for due
    /// renewals, and scanning thousands of subscriptions each time made the
    /// simulator, not the stack, what a benchmark measured.
    private var earliestDueMs: Int64 = .max

    init(bundleID: String = SimulatorSettings.defaultBundleID) {
        self.bundleID = bundleID
    }

    private mutating func newID(_ environment: AppleEnvironment) -> String {
        nextID += 1
        // Sandbox and production ids live in different ranges, as Apple's do.
        return String((environment == .sandbox ? 2_000_000_000_000_000 : 1_000_000_000_000_000) + nextID)
    }

    private mutating func nextRevision() -> Int64 {
        lastRevision += 1
        return lastRevision
    }

    /// A new transaction's order id, as on Apple's invoices (10 or so capitals and digits); recorded for lookups.
    private mutating func newOrder(for id: String) -> String {
        let order = "SIM" + String(Int64(id) ?? 0, radix: 36).uppercased()
        orders[order] = id
        return order
    }

    private func accountKey(_ account: String, _ environment: AppleEnvironment) -> String {
        "\(environment.rawValue)/\(account)"
    }

    mutating func purchase(
        account: String, productID: String, type: SimProductType, period: SimPeriod, quantity: Int,
        environment: AppleEnvironment, level: Int? = nil, now: Int64, appAccountToken: String? = nil
    ) throws(Failure) -> Purchase {
        let key = accountKey(account, environment)
        let owned = (accountTransactions[key] ?? []).compactMap { transactions[$0] }
        if type == .nonConsumable, owned.contains(where: { $0.productID == productID && $0.cancellationMs == nil }) {
            throw .alreadyOwned
        }
        let id = newID(environment)
        let expires = type == .autoRenewable ? now + period.milliseconds(in: environment) : nil
        let (order, revision) = (newOrder(for: id), nextRevision())
        transactions[id] = SimTransaction(
            id: id, account: account, environment: environment, originalID: id, productID: productID, type: type,
            quantity: quantity, purchaseMs: now,
            originalPurchaseMs: now, expiresMs: expires, webOrderLineItemID: type == .autoRenewable ? id + "1" : nil,
            orderID: order, revision: revision, appAccountToken: appAccountToken)
        accountTransactions[key, default: []].append(id)
        if let expires { earliestDueMs = min(earliestDueMs, expires) }
        if type == .autoRenewable {
            subscriptions[id] = SimSubscription(
                originalID: id, productID: productID, period: period, level: level, environment: environment,
                account: account, autoRenew: true, renewals: 0, transactionIDs: [id])
        }
        return Purchase(
            receiptData: mintReceipt(account: account, environment: environment, now: now), transactionID: id,
            originalTransactionID: id, expiresMs: expires, orderID: order)
    }

    /// A receipt of `account` holding every transaction it has now: the one
    /// minted last when nothing changed since (so answering verifyReceipt,
    /// which returns a `latest_receipt`, does not grow the store), else a new one.
    mutating func mintReceipt(account: String, environment: AppleEnvironment, now: Int64) -> String {
        let key = accountKey(account, environment)
        let current = accountTransactions[key] ?? []
        if let (count, token) = latestReceipt[key], count == current.count { return token }
        // An app receipt in Apple's layout (SimAppReceipt), found again by its base64. Its random opaque
        // value makes each one new, and puts '+' and '/' in its base64 as in real receipts, so encoding
        // damage is caught by the lookup. Cannot throw: swift-asn1 throws for nothing written here.
        let token = Data(
            try! SimAppReceipt.der(
                bundleID: bundleID, environment: environment, createdMs: now, transactions: current.compactMap { transactions[$0] })
        ).base64EncodedString()
        receipts[token] = SimReceipt(account: account, environment: environment, createdMs: now, transactionIDs: current)
        latestReceipt[key] = (current.count, token)
        return token
    }

    func receipt(_ token: String) -> SimReceipt? { receipts[token] }

    func transactions(ofAccount account: String, _ environment: AppleEnvironment) -> [SimTransaction] {
        (accountTransactions[accountKey(account, environment)] ?? []).compactMap { transactions[$0] }
    }

    mutating func refund(transactionID: String, reason: Int, now: Int64) throws(Failure) -> SimNotification {
        guard var transaction = transactions[transactionID] else { throw .unknownTransaction }
        transaction.cancellationMs = now
        transaction.cancellationReason = reason
        transaction.revision = nextRevision()
        transactions[transactionID] = transaction
        if var subscription = subscriptions[transaction.originalID] {
            subscription.autoRenew = false
            subscriptions[transaction.originalID] = subscription
        }
        return SimNotification(
            type: "REFUND", originalTransactionID: transaction.originalID, environment: transaction.environment,
            transactionID: transactionID)
    }

    mutating func setAutoRenew(
        originalTransactionID: String, enabled: Bool
    ) throws(Failure) -> SimNotification? {
        guard var subscription = subscriptions[originalTransactionID] else { throw .unknownSubscription }
        guard subscription.autoRenew != enabled else { return nil }
        subscription.autoRenew = enabled
        subscription.expirationIntent = enabled ? nil : 1
        subscriptions[originalTransactionID] = subscription
        if enabled, let expires = try? currentExpiry(of: originalTransactionID) {
            earliestDueMs = min(earliestDueMs, expires)
        }
        return SimNotification(
            type: "DID_CHANGE_RENEWAL_STATUS", originalTransactionID: originalTransactionID,
            environment: subscription.environment)
    }

    /// When the subscription's current period ends.
    func currentExpiry(of originalTransactionID: String) throws(Failure) -> Int64 {
        guard let subscription = subscriptions[originalTransactionID] else { throw .unknownSubscription }
        guard let lastID = subscription.transactionIDs.last, let expires = transactions[lastID]?.expiresMs else {
            throw .unknownSubscription
        }
        return expires
    }

    /// Apple's renewal-date extension: the current period of an active
    /// subscription ends `days` later (real days, in both environments); the
    /// changed transaction and the `RENEWAL_EXTENDED` notification.
    mutating func extend(
        originalTransactionID: String, days: Int, now: Int64
    ) throws(Failure) -> (transaction: SimTransaction, notification: SimNotification) {
        guard let subscription = subscriptions[originalTransactionID], let lastID = subscription.transactionIDs.last,
            var last = transactions[lastID], let expires = last.expiresMs
        else { throw .unknownSubscription }
        guard expires > now, last.cancellationMs == nil else { throw .notExtendable }
        last.expiresMs = expires + Int64(days) * 86_400_000
        last.revision = nextRevision()
        transactions[lastID] = last
        return (
            last,
            SimNotification(
                type: "RENEWAL_EXTENDED", originalTransactionID: originalTransactionID,
                environment: subscription.environment, transactionID: lastID)
        )
    }

    /// Renews every subscription whose period ended by `now` while auto-renew
    /// was on; sandbox stops after five renewals, as Apple's does.
    mutating func renewDue(now: Int64) -> [SimNotification] {
        guard now >= earliestDueMs else { return [] }
        defer { earliestDueMs = nextDue() }
        var notifications: [SimNotification] = []
        for originalID in subscriptions.keys.sorted() {
            guard var subscription = subscriptions[originalID] else { continue }
            while subscription.autoRenew, let lastID = subscription.transactionIDs.last,
                let last = transactions[lastID], let expires = last.expiresMs, expires <= now
            {
                if subscription.environment == .sandbox && subscription.renewals >= Self.sandboxRenewalLimit {
                    subscription.autoRenew = false
                    subscription.expirationIntent = 1
                    notifications.append(SimNotification(
                        type: "DID_CHANGE_RENEWAL_STATUS", originalTransactionID: originalID,
                        environment: subscription.environment))
                    break
                }
                // A queued downgrade or crossgrade takes effect with this renewal.
                if let plan = subscription.pending {
                    (subscription.productID, subscription.period, subscription.level) = (plan.productID, plan.period, plan.level)
                    subscription.pending = nil
                }
                let id = newID(subscription.environment)
                let (order, revision) = (newOrder(for: id), nextRevision())
                transactions[id] = SimTransaction(
                    id: id, account: subscription.account, environment: subscription.environment,
                    originalID: originalID, productID: subscription.productID, type: .autoRenewable,
                    quantity: 1, purchaseMs: expires, originalPurchaseMs: last.originalPurchaseMs,
                    expiresMs: expires + subscription.period.milliseconds(in: subscription.environment),
                    webOrderLineItemID: id + "1", orderID: order, revision: revision, appAccountToken: last.appAccountToken)
                subscription.transactionIDs.append(id)
                subscription.renewals += 1
                accountTransactions[accountKey(subscription.account, subscription.environment), default: []].append(id)
                notifications.append(SimNotification(
                    type: "DID_RENEW", originalTransactionID: originalID, environment: subscription.environment,
                    transactionID: id))
            }
            subscriptions[originalID] = subscription
        }
        return notifications
    }

    /// A customer's plan change, as the App Store applies it (StoreKit's
    /// subscription group rules): an upgrade, or a crossgrade to the same
    /// period, at once: the current transaction is marked upgraded and a new
    /// one starts now, its period counted from now (Apple refunds the rest of
    /// the old one); a downgrade, or a crossgrade to another period, queued
    /// for the next renewal. Choosing the current plan again while a change
    /// is queued cancels it. Either way auto-renew is on afterwards.
    mutating func changePlan(
        originalTransactionID: String, to productID: String, kind: SimPlanChange, period: SimPeriod?, level: Int?,
        now: Int64
    ) throws(Failure) -> (notification: SimNotification, transactionID: String?) {
        guard var subscription = subscriptions[originalTransactionID], let lastID = subscription.transactionIDs.last,
            var last = transactions[lastID], let expires = last.expiresMs
        else { throw .unknownSubscription }
        guard expires > now, last.cancellationMs == nil else { throw .notChangeable }
        let environment = subscription.environment
        let notification = { (subtype: String?, transactionID: String?, v1: String?) in
            SimNotification(
                type: "DID_CHANGE_RENEWAL_PREF", originalTransactionID: originalTransactionID, environment: environment,
                transactionID: transactionID, subtype: subtype, version1Type: v1)
        }
        subscription.autoRenew = true
        subscription.expirationIntent = nil
        // Renewing again: it falls due at the end of the current period.
        earliestDueMs = min(earliestDueMs, expires)
        if productID == subscription.productID {
            guard subscription.pending != nil else { throw .notChangeable }
            subscription.pending = nil
            subscriptions[originalTransactionID] = subscription
            return (notification(nil, nil, nil), nil)
        }
        if let from = subscription.level, let to = level, !kind.allows(from: from, to: to) { throw .levelMismatch }
        let period = period ?? subscription.period
        guard kind == .upgrade || (kind == .crossgrade && period == subscription.period) else {
            subscription.pending = SimSubscription.Plan(productID: productID, period: period, level: level)
            subscriptions[originalTransactionID] = subscription
            return (notification("DOWNGRADE", nil, nil), nil)
        }
        last.upgradedMs = now
        last.revision = nextRevision()
        transactions[lastID] = last
        let id = newID(subscription.environment)
        let (order, revision) = (newOrder(for: id), nextRevision())
        let ends = now + period.milliseconds(in: subscription.environment)
        transactions[id] = SimTransaction(
            id: id, account: subscription.account, environment: subscription.environment, originalID: originalTransactionID,
            productID: productID, type: .autoRenewable, quantity: 1, purchaseMs: now,
            originalPurchaseMs: last.originalPurchaseMs, expiresMs: ends, webOrderLineItemID: id + "1", orderID: order,
            revision: revision, customerPurchase: true)
        (subscription.productID, subscription.period, subscription.level, subscription.pending) = (productID, period, level, nil)
        subscription.transactionIDs.append(id)
        subscriptions[originalTransactionID] = subscription
        accountTransactions[accountKey(subscription.account, subscription.environment), default: []].append(id)
        earliestDueMs = min(earliestDueMs, ends)
        return (notification("UPGRADE", id, "INTERACTIVE_RENEWAL"), id)
    }

    /// The earliest end of period among subscriptions that will renew.
    private func nextDue() -> Int64 {
        subscriptions.values.lazy.filter(\.autoRenew).compactMap { subscription in
            subscription.transactionIDs.last.flatMap { self.transactions[$0]?.expiresMs }
        }.min() ?? .max
    }
}
