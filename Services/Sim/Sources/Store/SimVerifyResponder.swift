import Contracts
import Foundation

/// Answers a verifyReceipt call the way Apple does: the same JSON shape,
/// numbers as strings, and Apple's statuses for the wrong environment (21007,
/// 21008), a missing or wrong shared secret (21004), a malformed request
/// (21000) and anything it did not mint (21002).
struct SimVerifyResponder: Sendable {
    let bundleID: String
    let sharedSecret: String?

    func answer(
        _ body: [UInt8], at endpoint: AppleEnvironment, store: inout SimStore, now: Int64
    ) -> [String: Any] {
        guard let request = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let receiptData = request["receipt-data"] as? String
        else { return ["status": 21000] }
        guard let receipt = store.receipt(receiptData) else { return ["status": 21002] }
        guard receipt.environment == endpoint else {
            return ["status": receipt.environment == .sandbox ? 21007 : 21008]
        }
        let all = store.transactions(ofAccount: receipt.account, receipt.environment)
        let password = request["password"] as? String
        let hasSubscription = all.contains { $0.type == .autoRenewable }
        if (hasSubscription || password != nil), password == nil || password != sharedSecret {
            return ["status": 21004, "environment": Self.name(endpoint)]
        }
        let excludeOld = (request["exclude-old-transactions"] as? Bool) ?? false
        let inApp = receipt.transactionIDs.compactMap { store.transactions[$0] }.map(Self.json)
        var latest = all.filter { $0.type != .consumable }
        if excludeOld {
            // Apple's exclude-old-transactions: the latest renewal of each subscription only.
            let newest = Dictionary(grouping: latest.filter { $0.type == .autoRenewable }, by: \.originalID)
                .compactMap { $0.value.max { $0.purchaseMs < $1.purchaseMs } }
            latest = newest
        }
        var answer: [String: Any] = [
            "status": 0,
            "environment": Self.name(endpoint),
            "receipt": [
                "receipt_type": endpoint == .sandbox ? "ProductionSandbox" : "Production",
                "bundle_id": bundleID,
                "application_version": "1",
                "original_application_version": "1.0",
                "receipt_creation_date_ms": String(receipt.createdMs),
                "receipt_creation_date": Self.gmt(receipt.createdMs),
                "request_date_ms": String(now),
                "request_date": Self.gmt(now),
                "in_app": inApp,
            ] as [String: Any],
        ]
        if hasSubscription || !latest.isEmpty {
            answer["latest_receipt_info"] = latest.map(Self.json)
            answer["latest_receipt"] = store.mintReceipt(account: receipt.account, environment: endpoint, now: now)
            answer["pending_renewal_info"] = store.subscriptions.values
                .filter { $0.account == receipt.account && $0.environment == endpoint }
                .sorted { $0.originalID < $1.originalID }
                .map(Self.renewalJSON)
        }
        return answer
    }

    static func name(_ environment: AppleEnvironment) -> String {
        environment == .sandbox ? "Sandbox" : "Production"
    }

    static func json(_ t: SimTransaction) -> [String: Any] {
        var fields: [String: Any] = [
            "quantity": String(t.quantity),
            "product_id": t.productID,
            "transaction_id": t.id,
            "original_transaction_id": t.originalID,
            "purchase_date": gmt(t.purchaseMs),
            "purchase_date_ms": String(t.purchaseMs),
            "original_purchase_date": gmt(t.originalPurchaseMs),
            "original_purchase_date_ms": String(t.originalPurchaseMs),
            "is_trial_period": "false",
            "in_app_ownership_type": "PURCHASED",
        ]
        if let expires = t.expiresMs {
            fields["expires_date"] = gmt(expires)
            fields["expires_date_ms"] = String(expires)
            fields["is_in_intro_offer_period"] = "false"
            fields["subscription_group_identifier"] = "20000001"
        }
        if let line = t.webOrderLineItemID { fields["web_order_line_item_id"] = line }
        // As in Apple's answers (twigano's 2020 capture): the flag, no cancellation date.
        if t.upgradedMs != nil { fields["is_upgraded"] = "true" }
        if let cancelled = t.cancellationMs {
            fields["cancellation_date"] = gmt(cancelled)
            fields["cancellation_date_ms"] = String(cancelled)
            fields["cancellation_reason"] = String(t.cancellationReason ?? 0)
        }
        return fields
    }

    static func renewalJSON(_ s: SimSubscription) -> [String: Any] {
        var fields: [String: Any] = [
            "original_transaction_id": s.originalID,
            "product_id": s.productID,
            "auto_renew_product_id": s.autoRenewProductID,
            "auto_renew_status": s.autoRenew ? "1" : "0",
        ]
        if let intent = s.expirationIntent {
            fields["expiration_intent"] = String(intent)
            fields["is_in_billing_retry_period"] = "0"
        }
        return fields
    }

    /// Apple's "2019-11-21 06:16:20 Etc/GMT".
    static func gmt(_ ms: Int64) -> String { SimDate.text(ms, separator: " ", zone: " Etc/GMT") }
}
