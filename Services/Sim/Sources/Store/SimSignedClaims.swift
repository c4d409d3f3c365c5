import Contracts

/// The claims the App Store signs for StoreKit 2 and version 2 notifications
/// (Apple: JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload,
/// ResponseBodyV2DecodedPayload), built from the simulator's store.
enum SimSignedClaims {
    /// The one subscription group every simulated subscription is in.
    static let subscriptionGroup = "20000001"

    static func environmentName(_ environment: AppleEnvironment) -> String {
        environment == .sandbox ? "Sandbox" : "Production"
    }

    static func transaction(_ t: SimTransaction, bundleID: String, now: Int64) -> [String: Any] {
        var claims: [String: Any] = [
            "transactionId": t.id, "originalTransactionId": t.originalID, "bundleId": bundleID, "productId": t.productID,
            "purchaseDate": t.purchaseMs, "originalPurchaseDate": t.originalPurchaseMs, "quantity": t.quantity,
            "type": typeName(t.type), "inAppOwnershipType": "PURCHASED", "signedDate": now,
            "environment": environmentName(t.environment),
            "transactionReason": t.customerPurchase ? "PURCHASE" : "RENEWAL",
        ]
        if t.upgradedMs != nil { claims["isUpgraded"] = true }
        if let expires = t.expiresMs { claims["expiresDate"] = expires }
        if t.type == .autoRenewable { claims["subscriptionGroupIdentifier"] = subscriptionGroup }
        if let order = t.webOrderLineItemID { claims["webOrderLineItemId"] = order }
        if let token = t.appAccountToken { claims["appAccountToken"] = token }
        if let revoked = t.cancellationMs {
            claims["revocationDate"] = revoked
            claims["revocationReason"] = t.cancellationReason ?? 0
        }
        return claims
    }

    static func renewal(_ s: SimSubscription, renewalDate: Int64?, now: Int64) -> [String: Any] {
        var claims: [String: Any] = [
            "originalTransactionId": s.originalID, "productId": s.productID, "autoRenewProductId": s.autoRenewProductID,
            "autoRenewStatus": s.autoRenew ? 1 : 0, "isInBillingRetryPeriod": false, "signedDate": now,
            "environment": environmentName(s.environment),
        ]
        if let intent = s.expirationIntent { claims["expirationIntent"] = intent }
        if let renewalDate { claims["renewalDate"] = renewalDate }
        return claims
    }

    /// Apple's subtype where the simulator's change has one.
    static func subtype(of notification: SimNotification, subscription: SimSubscription?) -> String? {
        if let subtype = notification.subtype { return subtype }
        return switch notification.type {
        case "DID_CHANGE_RENEWAL_STATUS": subscription?.autoRenew == true ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED"
        default: nil
        }
    }

    private static func typeName(_ type: SimProductType) -> String {
        switch type {
        case .consumable: "Consumable"
        case .nonConsumable: "Non-Consumable"
        case .nonRenewing: "Non-Renewing Subscription"
        case .autoRenewable: "Auto-Renewable Subscription"
        }
    }
}
