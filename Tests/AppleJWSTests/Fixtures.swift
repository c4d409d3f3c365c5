import AppleJWS
import Foundation

/// The App Store's signed payloads copied unchanged from `shared/fixtures/apple` into this target's resources.
enum Fixtures {
    static func url(_ path: String) -> URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(path)
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOf: url(path), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The `signedPayload` of a notification body.
    static func signedPayload(_ path: String) throws -> String {
        let body = try JSONSerialization.jsonObject(with: Data(contentsOf: url(path))) as? [String: Any]
        return body?["signedPayload"] as? String ?? ""
    }

    static let sessionNotifications = [
        "01-did-renew", "02-subscribed-resubscribe", "03-did-change-renewal-status-auto-renew-disabled",
        "04-expired-voluntary", "06-did-change-renewal-pref-upgrade", "14-refund",
    ].map { "notifications-v2/real-apple/session-sandbox-2025/\($0).json" }

    /// A JSON object's value at `key` in a JWS's payload (not verified: for picking nested JWS out).
    static func claim(_ key: String, of jws: String) -> Any? {
        let payload = Base64URL.decode(jws.split(separator: ".")[1]) ?? []
        return ((try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any])?[key]
    }
}
