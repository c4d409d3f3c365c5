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

    func deliver(_ notifications: [SimNotification]) async {
        guard let url else { return }
        for notification in notifications {
            let body =
                version == 2
                ? simulator.notificationBodyV2(notification) : simulator.notificationBody(notification, password: password)
            guard let body else { continue }
            var delivered = false
            for attempt in 1...3 where !delivered {
                let status = try? await transport(url, Array(body))
                delivered = status.map { (200..<300).contains($0) } ?? false
                if !delivered { try? await Task.sleep(for: .milliseconds(100 * attempt)) }
            }
            logger.info(
                "notification sent",
                metadata: [
                    "notification.type": "\(notification.type)", "notification.version": "\(version)",
                    "delivered": "\(delivered)",
                ])
        }
    }
}
