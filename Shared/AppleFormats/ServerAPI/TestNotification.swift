/// Request a Test Notification (`POST /inApps/v1/notifications/test`): the
/// token to ask about it with.
public struct SendTestNotificationResponse: Codable, Sendable, Equatable {
    public var testNotificationToken: String?

    public init(testNotificationToken: String?) {
        self.testNotificationToken = testNotificationToken
    }
}

/// Get Test Notification Status (`GET /inApps/v1/notifications/test/{testNotificationToken}`):
/// the TEST notification sent and its delivery attempts.
public struct CheckTestNotificationResponse: Codable, Sendable, Equatable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String?, sendAttempts: [SendAttemptItem]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
