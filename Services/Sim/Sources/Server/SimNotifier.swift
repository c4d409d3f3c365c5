import Foundation
import Logging

/// Sends version 1 server notifications to the configured URL, as Apple
/// does (with `password` and a `unified_receipt`). Delivery is best effort
/// with a few retries: Apple itself retries for days, and tests count what
/// arrived rather than trusting this.
struct SimNotifier: Sendable {
    /// Posts one body; returns the HTTP status.
    typealias Transport = @Sendable (_ url: String, _ body: [UInt8]) async throws -> Int

    let simulator: AppStoreSimulator
    let url: String?
    let password: String?
    let transport: Transport
    let logger: Logger

    func deliver(_ notifications: [SimNotification]) async {
        guard let url else { return }
        for notification in notifications {
            guard let body = simulator.notificationBody(notification, password: password) else { continue }
            var delivered = false
            for attempt in 1...3 where !delivered {
                let status = try? await transport(url, Array(body))
                delivered = status.map { (200..<300).contains($0) } ?? false
                if !delivered { try? await Task.sleep(for: .milliseconds(100 * attempt)) }
            }
            logger.info(
                "notification sent",
                metadata: ["notification.type": "\(notification.type)", "delivered": "\(delivered)"])
        }
    }
}
