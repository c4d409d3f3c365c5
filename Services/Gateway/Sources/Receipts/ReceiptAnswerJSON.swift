import Contracts
import Foundation

/// The contract's JSON for receipts and entitlements (snake_case, times in ms).
enum ReceiptAnswerJSON {
    static func receipt(_ answer: ReceiptOrchestrator.Answer, transactionID: String?) -> [String: Any] {
        let result = answer.result
        let outcome = answer.outcome
        var body: [String: Any] = [
            "user_id": outcome.userID,
            "environment": environment(result.environment),
            "bundle_id": result.bundleID,
            "apple_status": Int(result.appleStatus),
            "granted": outcome.granted.map(grant),
            "already_granted": outcome.alreadyGranted,
            "revoked": outcome.revoked.map {
                ["transaction_id": $0.transactionID, "cancellation_date_ms": $0.cancellationDateMs] as [String: Any]
            },
            "entitlements": outcome.entitlements.map(entitlement),
        ]
        if let transactionID, let found = answer.transactionFound {
            body["transaction"] = ["transaction_id": transactionID, "found": found] as [String: Any]
        }
        return body
    }

    static func entitlements(_ answer: EntitlementsAnswer) -> [String: Any] {
        ["user_id": answer.userID, "entitlements": answer.entitlements.map(entitlement)]
    }

    static func grant(_ grant: Grant) -> [String: Any] {
        var json: [String: Any] = [
            "transaction_id": grant.transactionID, "original_transaction_id": grant.originalTransactionID,
            "product_id": grant.productID, "quantity": Int(grant.quantity), "purchase_date_ms": grant.purchaseDateMs,
        ]
        if grant.hasExpiresDateMs { json["expires_date_ms"] = grant.expiresDateMs }
        return json
    }

    static func entitlement(_ entitlement: Entitlement) -> [String: Any] {
        var json: [String: Any] = [
            "product_id": entitlement.productID, "original_transaction_id": entitlement.originalTransactionID,
            "environment": environment(entitlement.environment), "active": entitlement.active,
            "auto_renew": entitlement.autoRenew, "state": state(entitlement.state),
        ]
        json["expires_date_ms"] = entitlement.hasExpiresDateMs ? entitlement.expiresDateMs : NSNull()
        return json
    }

    static func environment(_ environment: AppleEnvironment) -> String {
        environment == .sandbox ? "Sandbox" : "Production"
    }

    static func state(_ state: EntitlementState) -> String {
        switch state {
        case .active: "active"
        case .grace: "grace"
        case .billingRetry: "billing_retry"
        case .revoked: "revoked"
        default: "expired"
        }
    }
}
