import Contracts
import Foundation

/// Reads one transaction object from any of Apple's layouts (`in_app`,
/// `latest_receipt_info`, an iOS 6 `receipt`, `latest_expired_receipt_info`).
enum TransactionReader {
    /// nil when the object has no transaction id (then it is not a transaction).
    static func read(_ json: JSONValue) -> Transaction? {
        guard let id = json["transaction_id"]?.text else { return nil }
        var t = Transaction()
        t.transactionID = id
        t.originalTransactionID = json["original_transaction_id"]?.text ?? id
        t.productID = json["product_id"]?.text ?? ""
        t.quantity = Int32(clamping: json["quantity"]?.int64 ?? 1)
        t.purchaseDateMs = milliseconds(json, "purchase_date") ?? 0
        t.originalPurchaseDateMs = milliseconds(json, "original_purchase_date") ?? t.purchaseDateMs
        if let expires = milliseconds(json, "expires_date") { t.expiresDateMs = expires }
        if let cancelled = milliseconds(json, "cancellation_date") { t.cancellationDateMs = cancelled }
        if let reason = json["cancellation_reason"]?.int64 { t.cancellationReason = Int32(clamping: reason) }
        t.isTrialPeriod = json["is_trial_period"]?.bool ?? false
        t.isInIntroOfferPeriod = json["is_in_intro_offer_period"]?.bool ?? false
        t.isUpgraded = json["is_upgraded"]?.bool ?? false
        t.webOrderLineItemID = json["web_order_line_item_id"]?.text ?? ""
        t.subscriptionGroupIdentifier = json["subscription_group_identifier"]?.text ?? ""
        t.ownershipType = switch json["in_app_ownership_type"]?.text {
        case "PURCHASED": .purchased
        case "FAMILY_SHARED": .familyShared
        default: .unspecified
        }
        t.offerCodeRefName = json["offer_code_ref_name"]?.text ?? ""
        t.promotionalOfferID = json["promotional_offer_id"]?.text ?? ""
        return t
    }

    /// A time in ms from `<name>_ms`. Old answers lack it: iOS 6 put the ms
    /// in `<name>` itself ("1354436154000"); a 2014 production answer has only
    /// the GMT text, the one date string read, as a last resort, because an
    /// expiry left unknown would make a long-expired subscription look endless.
    static func milliseconds(_ json: JSONValue, _ name: String) -> Int64? {
        if let ms = json[name + "_ms"]?.int64 { return ms }
        guard let value = json[name] else { return nil }
        if let ms = value.int64 { return ms }
        guard let text = value.text, text.hasSuffix(" Etc/GMT") else { return nil }
        return gmtDate(String(text.dropLast(" Etc/GMT".count)))
    }

    /// "2014-06-28 14:47:53" in UTC, as ms since the epoch.
    private static func gmtDate(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" }).compactMap { Int($0) }
        guard parts.count == 6 else { return nil }
        var components = DateComponents()
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
        (components.hour, components.minute, components.second) = (parts[3], parts[4], parts[5])
        guard let date = Calendar(identifier: .gregorian).date(from: components) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1_000).rounded())
    }
}
