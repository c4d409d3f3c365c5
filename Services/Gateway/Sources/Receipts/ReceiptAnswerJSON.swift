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
        json.key("already_granted")
        json.strings(outcome.alreadyGranted)
        json.key("apple_status")
        json.integer(context.appleStatus)
        json.key("bundle_id")
        json.string(context.bundleID)
        write(outcome.entitlements, into: &json)
        json.key("environment")
        json.string(environment(context.environment))
        json.key("granted")
        json.beginArray()
        for grant in outcome.granted { write(grant, into: &json) }
        json.endArray()
        json.key("revoked")
        json.beginArray()
        for revoked in outcome.revoked {
            json.beginObject()
            json.key("cancellation_date_ms")
            json.integer(revoked.cancellationDateMs)
            json.key("transaction_id")
            json.string(revoked.transactionID)
            json.endObject()
        }
        json.endArray()
        if context.hasTransactionFound {
            json.key("transaction")
            json.beginObject()
            json.key("found")
            json.bool(context.transactionFound)
            json.key("transaction_id")
            json.string(context.transactionID)
            json.endObject()
        }
        json.key("user_id")
        json.string(outcome.userID)
        json.endObject()
        return json.bytes
    }

    static func entitlements(_ answer: EntitlementsAnswer) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        if answer.accessListed { write(answer.access, into: &json) }
        write(answer.entitlements, into: &json)
        json.key("user_id")
        json.string(answer.userID)
        json.endObject()
        return json.bytes
    }

    private static func write(_ grant: Grant, into json: inout JSONWriter) {
        json.beginObject()
        if grant.hasExpiresDateMs {
            json.key("expires_date_ms")
            json.integer(grant.expiresDateMs)
        }
        json.key("original_transaction_id")
        json.string(grant.originalTransactionID)
        json.key("product_id")
        json.string(grant.productID)
        json.key("purchase_date_ms")
        json.integer(grant.purchaseDateMs)
        json.key("quantity")
        json.integer(grant.quantity)
        json.key("transaction_id")
        json.string(grant.transactionID)
        json.endObject()
    }

    /// The "access" key and its list.
    private static func write(_ access: [Access], into json: inout JSONWriter) {
        json.key("access")
        json.beginArray()
        for access in access {
            json.beginObject()
            json.key("active")
            json.bool(access.active)
            json.key("expires_date_ms")
            if access.hasExpiresDateMs { json.integer(access.expiresDateMs) } else { json.null() }
            json.key("name")
            json.string(access.name)
            json.key("product_id")
            json.string(access.productID)
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
            json.key("active")
            json.bool(entitlement.active)
            json.key("auto_renew")
            json.bool(entitlement.autoRenew)
            if entitlement.kind == .autoRenewable, !entitlement.autoRenewProductID.isEmpty {
                // With a catalog: what the renewal will unlock ("your plan changes to X on D").
                if !entitlement.autoRenewAccess.isEmpty {
                    json.key("auto_renew_access")
                    json.strings(entitlement.autoRenewAccess)
                }
                json.key("auto_renew_product_id")
                json.string(entitlement.autoRenewProductID)
            }
            json.key("environment")
            json.string(environment(entitlement.environment))
            // Always present: null when the purchase has no expiry.
            json.key("expires_date_ms")
            if entitlement.hasExpiresDateMs { json.integer(entitlement.expiresDateMs) } else { json.null() }
            json.key("kind")
            json.string(kind(entitlement.kind))
            json.key("original_transaction_id")
            json.string(entitlement.originalTransactionID)
            json.key("product_id")
            json.string(entitlement.productID)
            json.key("state")
            json.string(state(entitlement.state))
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
