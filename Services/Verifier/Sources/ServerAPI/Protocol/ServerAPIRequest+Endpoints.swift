import AppleFormats
import Foundation

/// The endpoints Storekeeper calls, with Apple's methods, paths and bodies
/// (App Store Server API; the shapes of apple/app-store-server-library-swift).
extension ServerAPIRequest {
    static func transactionInfo(_ transactionID: String) -> ServerAPIRequest {
        get("transaction_info", path(ServerAPIPath.transactionInfo, transactionID), fallsBackToSandbox: true)
    }

    /// Version 2; `revision` is the previous page's (nil: from the start).
    static func transactionHistory(_ transactionID: String, revision: String?) -> ServerAPIRequest {
        get(
            "transaction_history", path(ServerAPIPath.transactionHistory, transactionID),
            query: query([("revision", revision)]), fallsBackToSandbox: true)
    }

    static func subscriptionStatuses(_ transactionID: String) -> ServerAPIRequest {
        get("subscription_statuses", path(ServerAPIPath.subscriptionStatuses, transactionID), fallsBackToSandbox: true)
    }

    /// Version 2; `revision` is the previous page's (nil: from the start).
    static func refundHistory(_ transactionID: String, revision: String?) -> ServerAPIRequest {
        get(
            "refund_history", path(ServerAPIPath.refundHistory, transactionID), query: query([("revision", revision)]),
            fallsBackToSandbox: true)
    }

    /// The same body on every page; `paginationToken` is the previous page's.
    static func notificationHistory(_ body: NotificationHistoryRequest, paginationToken: String?) -> ServerAPIRequest {
        ServerAPIRequest(
            name: "notification_history", method: .post, path: ServerAPIPath.notificationHistory,
            query: query([("paginationToken", paginationToken)]), body: json(body), fallsBackToSandbox: false)
    }

    static func requestTestNotification() -> ServerAPIRequest {
        ServerAPIRequest(
            name: "test_notification", method: .post, path: ServerAPIPath.testNotification, query: "", body: [],
            fallsBackToSandbox: false)
    }

    static func testNotificationStatus(_ token: String) -> ServerAPIRequest {
        get("test_notification_status", path(ServerAPIPath.testNotification, token), fallsBackToSandbox: false)
    }

    static func lookUpOrder(_ orderID: String) -> ServerAPIRequest {
        get("order_lookup", path(ServerAPIPath.orderLookup, orderID), fallsBackToSandbox: false)
    }

    static func extendRenewalDate(_ originalTransactionID: String, _ body: ExtendRenewalDateRequest) -> ServerAPIRequest {
        ServerAPIRequest(
            name: "extend_renewal_date", method: .put, path: path(ServerAPIPath.extendRenewalDate, originalTransactionID),
            query: "", body: json(body), fallsBackToSandbox: true)
    }

    static func sendConsumption(_ transactionID: String, _ body: ConsumptionRequest) -> ServerAPIRequest {
        ServerAPIRequest(
            name: "consumption", method: .put, path: path(ServerAPIPath.consumption, transactionID), query: "",
            body: json(body), fallsBackToSandbox: true)
    }

    private static func get(_ name: String, _ path: String, query: String = "", fallsBackToSandbox: Bool) -> ServerAPIRequest {
        ServerAPIRequest(name: name, method: .get, path: path, query: query, body: [], fallsBackToSandbox: fallsBackToSandbox)
    }

    /// Sorted keys: the same request is the same bytes (tests, logs of sizes). The
    /// bodies are plain structs of strings, numbers and booleans: encoding cannot fail.
    private static func json(_ body: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array((try? encoder.encode(body)) ?? Data("{}".utf8))
    }
}
