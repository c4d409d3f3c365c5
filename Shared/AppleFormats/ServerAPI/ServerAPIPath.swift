/// The App Store Server API's paths, under either environment's base URL
/// (`https://api.storekit.itunes.apple.com`, `https://api.storekit-sandbox.itunes.apple.com`).
/// Where Apple puts an identifier after the path, it is one more segment.
public enum ServerAPIPath {
    /// `GET .../{transactionId}`: Get Transaction Info.
    public static let transactionInfo = "/inApps/v1/transactions"
    /// `GET .../{transactionId}?revision=`: Get Transaction History, version 2.
    public static let transactionHistory = "/inApps/v2/history"
    /// `GET .../{transactionId}`: Get All Subscription Statuses.
    public static let subscriptionStatuses = "/inApps/v1/subscriptions"
    /// `GET .../{transactionId}?revision=`: Get Refund History, version 2.
    public static let refundHistory = "/inApps/v2/refund/lookup"
    /// `POST ...?paginationToken=`: Get Notification History.
    public static let notificationHistory = "/inApps/v1/notifications/history"
    /// `POST ...`: Request a Test Notification; `GET .../{testNotificationToken}`: Get Test Notification Status.
    public static let testNotification = "/inApps/v1/notifications/test"
    /// `GET .../{orderId}`: Look Up Order ID.
    public static let orderLookup = "/inApps/v1/lookup"
    /// `PUT .../{originalTransactionId}`: Extend a Subscription Renewal Date.
    public static let extendRenewalDate = "/inApps/v1/subscriptions/extend"
    /// `PUT .../{transactionId}`: Send Consumption Information.
    public static let consumption = "/inApps/v1/transactions/consumption"
}
