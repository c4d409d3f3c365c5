import AppleFormats
import Contracts

/// The calls about server notifications. They name no transaction, so they
/// ask the environment given (production unless said).
extension AppStoreServerClient {
    /// Get Notification History, every page: the version 2 notifications the
    /// App Store sent between `start` and `end` (milliseconds since the epoch;
    /// Apple keeps 180 days), each verified and decoded as the ledger applies it.
    /// At most one filter: a transaction, a type, or only failed deliveries.
    public func notificationHistory(
        from start: Int64, to end: Int64, transactionID: String? = nil, notificationType: String? = nil,
        onlyFailures: Bool = false, environment: AppleEnvironment = .production, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> [ServerAPINotification] {
        let body = NotificationHistoryRequest(
            startDate: start, endDate: end, notificationType: notificationType, transactionId: transactionID,
            onlyFailures: onlyFailures ? true : nil)
        let (answeredIn, pages, _) = try await allPages(
            of: NotificationHistoryResponse.self, from: nil, in: environment, deadline: self.deadline(deadline),
            request: { .notificationHistory(body, paginationToken: $0) },
            next: { ($0.paginationToken, $0.hasMore ?? false) })
        var notifications: [ServerAPINotification] = []
        for item in pages.flatMap({ $0.notificationHistory ?? [] }) {
            guard let signed = item.signedPayload else { throw Self.missing("signedPayload") }
            notifications.append(try await notification(signed, attempts: item.sendAttempts, in: answeredIn))
        }
        return notifications
    }

    /// Request a Test Notification: Apple sends a TEST notification to the
    /// app's notification URL; the token asks about it.
    public func requestTestNotification(
        environment: AppleEnvironment = .production, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> String {
        let (_, answer) = try await executor.perform(
            .requestTestNotification(), as: SendTestNotificationResponse.self, in: environment,
            deadline: self.deadline(deadline))
        guard let token = answer.testNotificationToken, !token.isEmpty else { throw Self.missing("testNotificationToken") }
        return token
    }

    /// Get Test Notification Status: the TEST notification and its delivery
    /// attempts; `notFound` until Apple has it (4040008).
    public func testNotificationStatus(
        _ token: String, environment: AppleEnvironment = .production, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> ServerAPINotification {
        let (answeredIn, answer) = try await executor.perform(
            .testNotificationStatus(token), as: CheckTestNotificationResponse.self, in: environment,
            deadline: self.deadline(deadline))
        guard let signed = answer.signedPayload else { throw Self.missing("signedPayload") }
        return try await notification(signed, attempts: answer.sendAttempts, in: answeredIn)
    }

    private func notification(
        _ signed: String, attempts: [SendAttemptItem]?, in environment: AppleEnvironment
    ) async throws(ServerAPIError) -> ServerAPINotification {
        ServerAPINotification(
            signedPayload: signed, apply: try await checks.notification(signed, from: environment, receivedAtMs: nowMs),
            sendAttempts: attempts ?? [])
    }
}
