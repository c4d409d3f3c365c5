import AppleFormats
import Contracts

/// Transactions from a paginated endpoint (history, refunds) or an order,
/// every page fetched and every JWS verified.
public struct ServerAPITransactions: Sendable {
    public var environment: AppleEnvironment
    /// In Apple's order, as the ledger's contract has them.
    public var transactions: [Transaction]
    /// The JWS each came as, in the same order.
    public var signedTransactions: [String]
    /// The last page's revision: pass it as `since` to get only what changed
    /// after (nil where the endpoint has none).
    public var revision: String?

    public init(environment: AppleEnvironment, transactions: [Transaction], signedTransactions: [String], revision: String?) {
        self.environment = environment
        self.transactions = transactions
        self.signedTransactions = signedTransactions
        self.revision = revision
    }
}

/// One subscription's state from Get All Subscription Statuses, verified.
public struct ServerAPISubscriptionStatus: Sendable {
    public var subscriptionGroupIdentifier: String
    /// Apple's status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int32
    public var originalTransactionID: String
    /// The latest transaction.
    public var transaction: Transaction
    public var renewal: PendingRenewal?
    public var signedTransaction: String
    public var signedRenewalInfo: String?
}

public struct ServerAPISubscriptionStatuses: Sendable {
    public var environment: AppleEnvironment
    /// Every subscription of the customer in the app, group by group.
    public var subscriptions: [ServerAPISubscriptionStatus]
}

/// A notification the App Store sent (from the notification history or a
/// test notification's status), verified and decoded as the ledger applies it.
public struct ServerAPINotification: Sendable {
    public var signedPayload: String
    public var apply: NotificationApply
    /// How its deliveries went.
    public var sendAttempts: [SendAttemptItem]
}

/// Look Up Order ID: whether the order is this app's, and its transactions.
public struct ServerAPIOrder: Sendable {
    /// Apple's status 0; false (status 1) when the order is unknown or another app's.
    public var isValid: Bool
    public var transactions: ServerAPITransactions
}

/// Extend a Subscription Renewal Date: Apple's answer, and the environment that gave it.
public struct ServerAPIExtension: Sendable {
    public var environment: AppleEnvironment
    public var answer: ExtendRenewalDateResponse
}
