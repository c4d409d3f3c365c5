/// Get Notification History (`POST /inApps/v1/notifications/history`, the
/// next page with `?paginationToken=`): the body names the time span
/// (milliseconds since the epoch, at most 180 days back) and at most one filter.
public struct NotificationHistoryRequest: Codable, Sendable, Equatable {
    public var startDate: Int64?
    public var endDate: Int64?
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    public var onlyFailures: Bool?

    public init(
        startDate: Int64?, endDate: Int64?, notificationType: String? = nil, notificationSubtype: String? = nil,
        transactionId: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

/// One page of notification history.
public struct NotificationHistoryResponse: Codable, Sendable, Equatable {
    public var paginationToken: String?
    public var hasMore: Bool?
    public var notificationHistory: [NotificationHistoryResponseItem]?

    public init(paginationToken: String?, hasMore: Bool?, notificationHistory: [NotificationHistoryResponseItem]?) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}

/// One notification the App Store sent (a version 2 `signedPayload`) and how its delivery went.
public struct NotificationHistoryResponseItem: Codable, Sendable, Equatable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String?, sendAttempts: [SendAttemptItem]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}

/// One delivery attempt of a notification.
public struct SendAttemptItem: Codable, Sendable, Equatable {
    /// Milliseconds since the epoch.
    public var attemptDate: Int64?
    /// `SUCCESS`, `TIMED_OUT`, `NO_RESPONSE`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, ... (Apple: SendAttemptResult).
    public var sendAttemptResult: String?

    public init(attemptDate: Int64?, sendAttemptResult: String?) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}
