import Contracts
import Foundation

/// The contract's JSON for receipts and entitlements (snake_case, times in
/// ms), as Encodable values: JSONEncoder writes them directly, where
/// `[String: Any]` through JSONSerialization bridged every value to
/// Foundation objects first (the gateway's largest cost under load).
enum ReceiptAnswerJSON {
    struct Receipt: Encodable {
        let userID: String
        let environment: String
        let bundleID: String
        let appleStatus: Int
        let transaction: TransactionFound?
        let granted: [GrantJSON]
        let alreadyGranted: [String]
        let revoked: [Revoked]
        let entitlements: [EntitlementJSON]
        /// With a catalog only.
        let access: [AccessJSON]?

        enum CodingKeys: String, CodingKey {
            case userID = "user_id", environment, bundleID = "bundle_id", appleStatus = "apple_status", transaction
            case granted, alreadyGranted = "already_granted", revoked, entitlements, access
        }
    }

    struct AccessJSON: Encodable {
        let access: Access

        enum CodingKeys: String, CodingKey {
            case name, active, productID = "product_id", expiresDateMs = "expires_date_ms"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(access.name, forKey: .name)
            try container.encode(access.active, forKey: .active)
            try container.encode(access.productID, forKey: .productID)
            if access.hasExpiresDateMs {
                try container.encode(access.expiresDateMs, forKey: .expiresDateMs)
            } else {
                try container.encodeNil(forKey: .expiresDateMs)
            }
        }
    }

    struct TransactionFound: Encodable {
        let transactionID: String
        let found: Bool
        enum CodingKeys: String, CodingKey { case transactionID = "transaction_id", found }
    }

    struct Revoked: Encodable {
        let transactionID: String
        let cancellationDateMs: Int64
        enum CodingKeys: String, CodingKey { case transactionID = "transaction_id", cancellationDateMs = "cancellation_date_ms" }
    }

    struct GrantJSON: Encodable {
        let grant: Grant

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id", originalTransactionID = "original_transaction_id"
            case productID = "product_id", quantity, purchaseDateMs = "purchase_date_ms", expiresDateMs = "expires_date_ms"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(grant.transactionID, forKey: .transactionID)
            try container.encode(grant.originalTransactionID, forKey: .originalTransactionID)
            try container.encode(grant.productID, forKey: .productID)
            try container.encode(Int(grant.quantity), forKey: .quantity)
            try container.encode(grant.purchaseDateMs, forKey: .purchaseDateMs)
            if grant.hasExpiresDateMs { try container.encode(grant.expiresDateMs, forKey: .expiresDateMs) }
        }
    }

    struct EntitlementJSON: Encodable {
        let entitlement: Entitlement

        enum CodingKeys: String, CodingKey {
            case productID = "product_id", originalTransactionID = "original_transaction_id", environment
            case expiresDateMs = "expires_date_ms", active, autoRenew = "auto_renew", state, kind
            case autoRenewProductID = "auto_renew_product_id", autoRenewAccess = "auto_renew_access"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entitlement.productID, forKey: .productID)
            try container.encode(entitlement.originalTransactionID, forKey: .originalTransactionID)
            try container.encode(ReceiptAnswerJSON.environment(entitlement.environment), forKey: .environment)
            // Always present: null when the purchase has no expiry.
            if entitlement.hasExpiresDateMs {
                try container.encode(entitlement.expiresDateMs, forKey: .expiresDateMs)
            } else {
                try container.encodeNil(forKey: .expiresDateMs)
            }
            try container.encode(entitlement.active, forKey: .active)
            try container.encode(entitlement.autoRenew, forKey: .autoRenew)
            try container.encode(ReceiptAnswerJSON.state(entitlement.state), forKey: .state)
            try container.encode(ReceiptAnswerJSON.kind(entitlement.kind), forKey: .kind)
            if entitlement.kind == .autoRenewable, !entitlement.autoRenewProductID.isEmpty {
                try container.encode(entitlement.autoRenewProductID, forKey: .autoRenewProductID)
                // With a catalog: what the renewal will unlock ("your plan changes to X on D").
                if !entitlement.autoRenewAccess.isEmpty {
                    try container.encode(entitlement.autoRenewAccess, forKey: .autoRenewAccess)
                }
            }
        }
    }

    struct Entitlements: Encodable {
        let userID: String
        let entitlements: [EntitlementJSON]
        let access: [AccessJSON]?
        enum CodingKeys: String, CodingKey { case userID = "user_id", entitlements, access }
    }

    /// Made from the outcome alone, so an answer kept under an Idempotency-Key
    /// renders byte for byte as it did the first time.
    static func receipt(_ outcome: RecordOutcome) -> Receipt {
        let context = outcome.answerContext
        return Receipt(
            userID: outcome.userID, environment: environment(context.environment), bundleID: context.bundleID,
            appleStatus: Int(context.appleStatus),
            transaction: context.hasTransactionFound
                ? TransactionFound(transactionID: context.transactionID, found: context.transactionFound) : nil,
            granted: outcome.granted.map(GrantJSON.init), alreadyGranted: outcome.alreadyGranted,
            revoked: outcome.revoked.map { Revoked(transactionID: $0.transactionID, cancellationDateMs: $0.cancellationDateMs) },
            entitlements: outcome.entitlements.map(EntitlementJSON.init),
            access: outcome.accessListed ? outcome.access.map(AccessJSON.init) : nil)
    }

    static func entitlements(_ answer: EntitlementsAnswer) -> Entitlements {
        Entitlements(
            userID: answer.userID, entitlements: answer.entitlements.map(EntitlementJSON.init),
            access: answer.accessListed ? answer.access.map(AccessJSON.init) : nil)
    }

    /// Entitlements exist for these kinds only; an older ledger's answer has none, and only subscriptions.
    static func kind(_ kind: ProductKind) -> String {
        switch kind {
        case .nonRenewing: "non_renewing"
        case .nonConsumable: "non_consumable"
        default: "auto_renewable"
        }
    }

    static func environment(_ environment: AppleEnvironment) -> String {
        (environment == .sandbox ? AppleEnvironment.sandbox : .production).appleName
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
