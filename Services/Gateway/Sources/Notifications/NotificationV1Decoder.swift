import Contracts
import Crypto
import Foundation
import StorekeeperCore
import AppleFormats

/// App Store Server Notifications version 1: a JSON body Apple POSTs with the
/// shared secret as `password`, the type, the renewal status and the
/// `unified_receipt` (a verifyReceipt answer). Turned into the ledger's
/// `NotificationApply`; version 1 has no id, so the body's digest is its id
/// (Apple redelivers the same bytes).
enum NotificationV1Decoder {
    /// `body` is `bytes` already parsed (the digest of the bytes is the notification's id).
    static func decode(
        _ body: JSONValue, bytes: [UInt8], sharedSecret: Secret?, bundleIDs: [String], receivedAt: Int64
    ) throws(APIError) -> NotificationApply {
        guard let secret = sharedSecret, let password = body["password"]?.text,
            ConstantTime.equal(
                Array(SHA256.hash(data: Array(password.utf8))), Array(SHA256.hash(data: Array(secret.revealed.utf8))))
        else { throw APIError(.unauthorized, "the notification password is wrong") }
        guard let type = body["notification_type"]?.text, !type.isEmpty else {
            throw .badRequest("notification_type is missing")
        }
        let environment = AppleEnvironment(notificationV1Name: body["environment"]?.text)
        let bundleID = body["bid"]?.text ?? ""
        if BundleRule(allowed: bundleIDs).verdict(for: bundleID, whenUnconfigured: .acceptAny) != .accepted {
            throw APIError(.bundleMismatch, "the notification is for another app")
        }
        let receipt = Self.receipt(of: body, environment: environment)

        var notification = NotificationApply()
        notification.notificationID = Hex.lowercase(SHA256.hash(data: bytes))
        notification.version = .v1
        notification.notificationType = type
        notification.environment = environment
        notification.bundleID = bundleID
        notification.transactions = receipt?.transactions ?? []
        notification.pendingRenewals = receipt?.pendingRenewals ?? []
        notification.latestReceipt = receipt?.latestReceipt ?? body["latest_receipt"]?.text ?? ""
        if let subject = NotificationV1Subject.originalTransactionID(of: body, receipt: receipt) {
            notification.originalTransactionID = subject
        } else {
            notification.subjectUnknown = true
        }
        if let status = body["auto_renew_status"]?.bool { notification.autoRenewStatus = status }
        notification.autoRenewProductID = body["auto_renew_product_id"]?.text ?? ""
        // The last toggle's date, which dates the auto-renew status alone; the rest is stated when received.
        if let changed = body["auto_renew_status_change_date_ms"]?.int64 { notification.autoRenewStatusChangeDateMs = changed }
        notification.receivedAtMs = receivedAt
        return notification
    }

    /// The transactions and renewal info: `unified_receipt` (a verifyReceipt
    /// answer), or for older bodies the top-level `latest_receipt_info`.
    private static func receipt(of body: JSONValue, environment: AppleEnvironment) -> VerifyResult? {
        var source = body["unified_receipt"]?.object ?? body.object ?? [:]
        if source["status"] == nil { source["status"] = .integer(0) }
        guard let response = try? AppleResponse(json: .object(source)) else { return nil }
        return ReceiptNormalizer.normalize(response, environment: environment, receiptSHA256: "")
    }
}
