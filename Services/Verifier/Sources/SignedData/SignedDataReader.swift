import AppleFormats
import AppleJWS
import Contracts
import Crypto
import Foundation
import StorekeeperCore

/// StoreKit 2 signed transactions and App Store Server Notifications v2,
/// verified locally (no call to Apple) and normalized into the contracts a
/// verifyReceipt answer produces, so the ledger records both worlds alike:
/// one transaction is one transaction, whichever way it came.
///
/// Checks, in order: the JWS (chain, markers, signature: `SignedDataVerifier`),
/// then the claims: a known environment (Production or Sandbox), the bundle
/// against `STOREKEEPER_BUNDLE_IDS`, and, in a notification, nested JWS that
/// verify too and agree with it on bundle and environment.
public struct SignedDataReader: Sendable {
    let verifier: SignedDataVerifier
    let bundleRule: BundleRule
    /// `STOREKEEPER_ACCEPT_SANDBOX`: false refuses sandbox data with `sandbox_not_accepted`.
    let acceptSandbox: Bool

    public init(verifier: SignedDataVerifier, bundleIDs: [String], acceptSandbox: Bool = true) {
        self.verifier = verifier
        self.bundleRule = BundleRule(allowed: bundleIDs)
        self.acceptSandbox = acceptSandbox
    }

    /// One StoreKit 2 transaction, as a `VerifyResult` of style SIGNED_TRANSACTION.
    public func transaction(_ jws: String, nowMs: Int64) async throws(ServiceFailure) -> VerifyResult {
        let claims: SignedTransactionClaims = try await verified(jws)
        let environment = try Self.environment(claims.environment)
        try checkBundle(claims.bundleId)
        try checkAccepted(environment)
        let transaction = try Self.transaction(claims)
        let signedMs = try claims.signedDate.map(Self.milliseconds) ?? 0
        return VerifyResult.with {
            $0.environment = environment
            $0.style = .signedTransaction
            $0.bundleID = claims.bundleId ?? ""
            $0.receiptCreationDateMs = signedMs
            $0.requestDateMs = nowMs
            $0.transactions = [transaction]
            $0.receiptSha256 = Hex.lowercase(SHA256.hash(data: Array(jws.utf8)))
        }
    }

    /// A version 2 notification's `signedPayload`, with its nested JWS, as the ledger applies it.
    public func notification(_ signedPayload: String, receivedAtMs: Int64) async throws(ServiceFailure) -> NotificationApply {
        let claims: SignedNotificationClaims = try await verified(signedPayload)
        guard let uuid = claims.notificationUUID, !uuid.isEmpty, let type = claims.notificationType, !type.isEmpty else {
            throw Self.invalid("the notification has no notificationUUID or notificationType")
        }
        let signedMs = try claims.signedDate.map(Self.milliseconds) ?? 0
        var apply = NotificationApply.with {
            $0.notificationID = uuid
            $0.version = .v2
            $0.notificationType = type
            $0.subtype = claims.subtype ?? ""
            $0.signedDateMs = signedMs
            $0.receivedAtMs = receivedAtMs
        }
        // A summary (RENEWAL_EXTENSION) or external-purchase notification has no data: nothing per purchase.
        guard let data = claims.data else { return apply }
        apply.environment = try Self.environment(data.environment)
        try checkBundle(data.bundleId)
        try checkAccepted(apply.environment)
        apply.bundleID = data.bundleId ?? ""
        if let signed = data.signedTransactionInfo {
            let transaction: SignedTransactionClaims = try await verified(signed)
            try Self.agree(transaction.bundleId, transaction.environment, with: data)
            apply.transactions = [try Self.transaction(transaction)]
            apply.originalTransactionID = apply.transactions[0].originalTransactionID
        }
        if let signed = data.signedRenewalInfo {
            let renewal: SignedRenewalClaims = try await verified(signed)
            try Self.agree(nil, renewal.environment, with: data)
            let pending = try Self.pendingRenewal(renewal)
            if !apply.originalTransactionID.isEmpty, pending.originalTransactionID != apply.originalTransactionID {
                throw Self.invalid("the renewal info is about another subscription")
            }
            apply.originalTransactionID = pending.originalTransactionID
            apply.pendingRenewals = [pending]
            if pending.hasAutoRenewStatus { apply.autoRenewStatus = pending.autoRenewStatus }
            apply.autoRenewProductID = pending.autoRenewProductID
        }
        return apply
    }

    // MARK: Steps

    private func verified<Claims: Decodable>(_ jws: String) async throws(ServiceFailure) -> Claims {
        let payload: [UInt8]
        do {
            payload = try await verifier.verify(jws)
        } catch {
            throw ServiceFailure(.signatureInvalid, message: "the signed data does not verify against Apple's certificates (\(error.code))")
        }
        do {
            return try JSONDecoder().decode(Claims.self, from: Data(payload))
        } catch {
            throw Self.invalid("the signed payload is not of the expected shape")
        }
    }

    /// A JWS has nothing tying it to this app but its bundleId: with no
    /// STOREKEEPER_BUNDLE_IDS, none passes (`BundleRule.WhenUnconfigured.refuse`).
    private func checkBundle(_ bundleID: String?) throws(ServiceFailure) {
        switch bundleRule.verdict(for: bundleID, whenUnconfigured: .refuse) {
        case .accepted: return
        case .unnamed: throw Self.invalid("the signed data names no bundleId")
        case .unconfigured:
            throw ServiceFailure(
                .bundleMismatch, message: "signed data is refused until STOREKEEPER_BUNDLE_IDS names this app")
        case .otherApp: throw ServiceFailure(.bundleMismatch, message: "the signed data belongs to another app")
        }
    }

    private func checkAccepted(_ environment: AppleEnvironment) throws(ServiceFailure) {
        guard environment == .sandbox, !acceptSandbox else { return }
        throw ServiceFailure(.sandboxNotAccepted, message: "sandbox purchases are not accepted here")
    }

    static func environment(_ name: String?) throws(ServiceFailure) -> AppleEnvironment {
        guard let environment = AppleEnvironment(appleName: name) else {
            throw invalid("the signed data is not from the Production or Sandbox environment")
        }
        return environment
    }

    /// Nested JWS must be about the notification's app and environment.
    static func agree(
        _ bundleID: String?, _ environment: String?, with data: SignedNotificationClaims.Data
    ) throws(ServiceFailure) {
        if let bundleID, bundleID != data.bundleId { throw invalid("a nested JWS belongs to another app") }
        guard environment == data.environment else { throw invalid("a nested JWS is from another environment") }
    }

    static func transaction(_ claims: SignedTransactionClaims) throws(ServiceFailure) -> Transaction {
        guard let id = claims.transactionId, !id.isEmpty, let product = claims.productId, !product.isEmpty,
            let purchased = claims.purchaseDate
        else { throw invalid("the signed transaction lacks transactionId, productId or purchaseDate") }
        var transaction = Transaction()
        transaction.transactionID = id
        transaction.originalTransactionID = claims.originalTransactionId ?? id
        transaction.productID = product
        transaction.quantity = claims.quantity ?? 1
        transaction.purchaseDateMs = try milliseconds(purchased)
        transaction.originalPurchaseDateMs = try milliseconds(claims.originalPurchaseDate ?? purchased)
        if let expires = claims.expiresDate { transaction.expiresDateMs = try milliseconds(expires) }
        if let revoked = claims.revocationDate { transaction.cancellationDateMs = try milliseconds(revoked) }
        if let reason = claims.revocationReason { transaction.cancellationReason = reason }
        transaction.isUpgraded = claims.isUpgraded ?? false
        transaction.kind = kind(claims.type)
        transaction.webOrderLineItemID = claims.webOrderLineItemId ?? ""
        transaction.subscriptionGroupIdentifier = claims.subscriptionGroupIdentifier ?? ""
        transaction.ownershipType = claims.inAppOwnershipType == "FAMILY_SHARED" ? .familyShared : .purchased
        transaction.appAccountToken = claims.appAccountToken ?? ""
        if let price = claims.price, let currency = claims.currency, !currency.isEmpty {
            transaction.priceMilliunits = price
            transaction.currency = currency
        }
        // offerType: 1 introductory, 2 promotional, 3 offer code (4 win-back).
        transaction.isInIntroOfferPeriod = claims.offerType == 1
        if claims.offerType == 2 { transaction.promotionalOfferID = claims.offerIdentifier ?? "" }
        if claims.offerType == 3 { transaction.offerCodeRefName = claims.offerIdentifier ?? "" }
        return transaction
    }

    /// Apple's `type` names (JWSTransactionDecodedPayload.type); anything else is unknown.
    static func kind(_ type: String?) -> ProductKind {
        switch type {
        case "Auto-Renewable Subscription": .autoRenewable
        case "Non-Renewing Subscription": .nonRenewing
        case "Non-Consumable": .nonConsumable
        case "Consumable": .consumable
        default: .unspecified
        }
    }

    static func pendingRenewal(_ claims: SignedRenewalClaims) throws(ServiceFailure) -> PendingRenewal {
        var pending = PendingRenewal()
        pending.originalTransactionID = claims.originalTransactionId ?? ""
        pending.productID = claims.productId ?? ""
        pending.autoRenewProductID = claims.autoRenewProductId ?? ""
        if let status = claims.autoRenewStatus { pending.autoRenewStatus = status == 1 }
        if let intent = claims.expirationIntent { pending.expirationIntent = intent }
        pending.isInBillingRetryPeriod = claims.isInBillingRetryPeriod ?? false
        if let grace = claims.gracePeriodExpiresDate { pending.gracePeriodExpiresDateMs = try milliseconds(grace) }
        if let consent = claims.priceIncreaseStatus { pending.priceConsentStatus = consent }
        // Only an offer code has a reference name; promotional and win-back ids are not one.
        if claims.offerType == 3 { pending.offerCodeRefName = claims.offerIdentifier ?? "" }
        return pending
    }

    /// Apple's dates are milliseconds (Xcode signs fractions); anything not a sane number is refused.
    static func milliseconds(_ value: Double) throws(ServiceFailure) -> Int64 {
        guard let whole = Int64(exactly: value.rounded(.down)), whole >= 0 else {
            throw invalid("a date in the signed data is not a time")
        }
        return whole
    }

    static func invalid(_ message: String) -> ServiceFailure { ServiceFailure(.receiptInvalid, message: message) }
}
