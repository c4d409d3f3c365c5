import Foundation
import Logging

/// Sends server notifications to the configured URL, as Apple does: version
/// 1 (with `password` and a `unified_receipt`) or version 2 (a `signedPayload`
/// signed with the simulator's test chain). Delivery is best effort
/// with a few retries: Apple itself retries for days, and tests count what
/// arrived rather than trusting this.
struct SimNotifier: Sendable {
    /// Posts one body; returns the HTTP status.
    typealias Transport = @Sendable (_ url: String, _ body: [UInt8]) async throws -> Int

    let simulator: AppStoreSimulator
    let url: String?
    let password: String?
    /// 1 or 2 (`STOREKEEPER_SIM_NOTIFICATION_VERSION`).
    let version: Int
    let transport: Transport
    let logger: Logger

    /// Records each notification (for the Server API's notification history) and sends it.
    func deliver(_ notifications: [SimNotification]) async {
        for notification in notifications {
            guard let record = simulator.record(notification) else { continue }
            await send(record, version1: version == 2 ? nil : notification)
        }
    }

    /// A notification recorded already: a TEST one, which Apple sends in version 2 only.
    func deliver(_ record: SimNotificationRecord) async {
        await send(record, version1: nil)
    }

    /// Each attempt's result is kept with the record, in Apple's words (SendAttemptResult).
    private func send(_ record: SimNotificationRecord, version1 notification: SimNotification?) async {
        guard let url else { return }
        let body =
            notification.map { simulator.notificationBody($0, password: password) } ?? simulator.notificationBodyV2(record)
        guard let body else { return }
        if simulator.dropsNotifications.load(ordering: .relaxed) {
            // Lost on its way, as a network can lose it: Apple's history says it was not answered.
            simulator.recordAttempt(record.uuid, result: "NO_RESPONSE")
            logger.info("notification dropped (fault)", metadata: ["notification.type": "\(record.type)"])
            return
        }
        var delivered = false
        for attempt in 1...3 where !delivered {
            let result: String
            do {
                delivered = (200..<300).contains(try await transport(url, Array(body)))
                result = delivered ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
            } catch {
                result = "NO_RESPONSE"
            }
            simulator.recordAttempt(record.uuid, result: result)
            if !delivered { try? await Task.sleep(for: .milliseconds(100 * attempt)) }
        }
        logger.info(
            "notification sent",
            metadata: [
                "notification.type": "\(record.type)", "notification.version": "\(notification == nil ? 2 : 1)",
                "delivered": "\(delivered)",
            ])
    }
}
