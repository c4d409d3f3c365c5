import AppleFormats
import Contracts

/// The contract's JSON for receipts and entitlements (snake_case, times in
/// ms), written with `JSONWriter`: Foundation's JSONEncoder cost the gateway
/// more per answer than the HTTP parsing (see JSONWriter). Keys come in
/// sorted order, byte for byte what the encoder with `.sortedKeys` wrote, and
/// an answer made from the same outcome always renders the same: one kept
/// under an Idempotency-Key comes back byte for byte.
enum ReceiptAnswerJSON {
    /// Made from the outcome alone, so an answer kept under an Idempotency-Key
    /// renders byte for byte as it did the first time.
    static func receipt(_ outcome: RecordOutcome) -> [UInt8] {
        let context = outcome.answerContext
        var json = JSONWriter()
        json.beginObject()
        // With a catalog only.
        if outcome.accessListed { write(outcome.access, into: &json) }
        json.field("already_granted", outcome.alreadyGranted)
        json.field("apple_status", context.appleStatus)
        json.field("bundle_id", context.bundleID)
        write(outcome.entitlements, into: &json)
        json.field("environment", environment(context.environment))
        json.key("granted")
        json.beginArray()
        for grant in outcome.granted { write(grant, into: &json) }
        json.endArray()
        json.key("revoked")
        json.beginArray()
        for revoked in outcome.revoked {
            json.beginObject()
            json.field("cancellation_date_ms", revoked.cancellationDateMs)
            json.field("transaction_id", revoked.transactionID)
            json.endObject()
        }
        json.endArray()
        if context.hasTransactionFound {
            json.key("transaction")
            json.beginObject()
            json.field("found", context.transactionFound)
            json.field("transaction_id", context.transactionID)
            json.endObject()
        }
        json.field("user_id", outcome.userID)
        json.endObject()
        return json.bytes
    }

    static func entitlements(_ answer: EntitlementsAnswer) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        if answer.accessListed { write(answer.access, into: &json) }
        write(answer.entitlements, into: &json)
        json.field("user_id", answer.userID)
        json.endObject()
        return json.bytes
    }

    private static func write(_ grant: Grant, into json: inout JSONWriter) {
        json.beginObject()
        if grant.hasExpiresDateMs { json.field("expires_date_ms", grant.expiresDateMs) }
        json.field("original_transaction_id", grant.originalTransactionID)
        json.field("product_id", grant.productID)
        json.field("purchase_date_ms", grant.purchaseDateMs)
        json.field("quantity", grant.quantity)
        json.field("transaction_id", grant.transactionID)
        json.endObject()
    }

    /// The "access" key and its list.
    private static func write(_ access: [Access], into json: inout JSONWriter) {
        json.key("access")
        json.beginArray()
        for access in access {
            json.beginObject()
            json.field("active", access.active)
            json.field("expires_date_ms", orNull: access.hasExpiresDateMs ? access.expiresDateMs : nil)
            json.field("name", access.name)
            json.field("product_id", access.productID)
            json.endObject()
        }
        json.endArray()
    }

    /// The "entitlements" key and its list.
    private static func write(_ entitlements: [Entitlement], into json: inout JSONWriter) {
        json.key("entitlements")
        json.beginArray()
        for entitlement in entitlements {
            json.beginObject()
            json.field("active", entitlement.active)
            json.field("auto_renew", entitlement.autoRenew)
            if entitlement.kind == .autoRenewable, !entitlement.autoRenewProductID.isEmpty {
                // With a catalog: what the renewal will unlock ("your plan changes to X on D").
                if !entitlement.autoRenewAccess.isEmpty {
                    json.field("auto_renew_access", entitlement.autoRenewAccess)
                }
                json.field("auto_renew_product_id", entitlement.autoRenewProductID)
            }
            json.field("environment", environment(entitlement.environment))
            // Always present: null when the purchase has no expiry.
            json.field("expires_date_ms", orNull: entitlement.hasExpiresDateMs ? entitlement.expiresDateMs : nil)
            json.field("kind", kind(entitlement.kind))
            json.field("original_transaction_id", entitlement.originalTransactionID)
            json.field("product_id", entitlement.productID)
            json.field("state", state(entitlement.state))
            json.endObject()
        }
        json.endArray()
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
