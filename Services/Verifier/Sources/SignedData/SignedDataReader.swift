import AppleJWS
import Contracts
import Crypto
import Foundation

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
    let bundleIDs: [String]

    public init(verifier: SignedDataVerifier, bundleIDs: [String]) {
        self.verifier = verifier
        self.bundleIDs = bundleIDs
    }

    /// One StoreKit 2 transaction, as a `VerifyResult` of style SIGNED_TRANSACTION.
    public func transaction(_ jws: String, nowMs: Int64) async throws(ServiceFailure) -> VerifyResult {
        let claims: SignedTransactionClaims = try await verified(jws)
        let environment = try Self.environment(claims.environment)
        try checkBundle(claims.bundleId)
        let transaction = try Self.transaction(claims)
        return VerifyResult.with {
            $0.environment = environment
            $0.style = .signedTransaction
            $0.bundleID = claims.bundleId ?? ""
            $0.receiptCreationDateMs = claims.signedDate.map(Self.milliseconds) ?? 0
            $0.requestDateMs = nowMs
            $0.transactions = [transaction]
            $0.receiptSha256 = SHA256.hash(data: Array(jws.utf8)).map { String(format: "%02x", $0) }.joined()
        }
    }

    /// A version 2 notification's `signedPayload`, with its nested JWS, as the ledger applies it.
    public func notification(_ signedPayload: String, receivedAtMs: Int64) async throws(ServiceFailure) -> NotificationApply {
        let claims: SignedNotificationClaims = try await verified(signedPayload)
        guard let uuid = claims.notificationUUID, !uuid.isEmpty, let type = claims.notificationType, !type.isEmpty else {
            throw Self.invalid("the notification has no notificationUUID or notificationType")
        }
        var apply = NotificationApply.with {
            $0.notificationID = uuid
            $0.version = .v2
            $0.notificationType = type
            $0.subtype = claims.subtype ?? ""
            $0.signedDateMs = claims.signedDate.map(Self.milliseconds) ?? 0
            $0.receivedAtMs = receivedAtMs
        }
        // A summary (RENEWAL_EXTENSION) or external-purchase notification has no data: nothing per purchase.
        guard let data = claims.data else { return apply }
        apply.environment = try Self.environment(data.environment)
        try checkBundle(data.bundleId)
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
            let pending = Self.pendingRenewal(renewal)
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

    private func checkBundle(_ bundleID: String?) throws(ServiceFailure) {
        guard let bundleID, !bundleID.isEmpty else { throw Self.invalid("the signed data names no bundleId") }
        guard bundleIDs.isEmpty || bundleIDs.contains(bundleID) else {
            throw ServiceFailure(.bundleMismatch, message: "the signed data belongs to another app")
        }
    }

    static func environment(_ name: String?) throws(ServiceFailure) -> AppleEnvironment {
        switch name {
        case "Production": .production
        case "Sandbox": .sandbox
        default: throw invalid("the signed data is not from the Production or Sandbox environment")
        }
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
        return Transaction.with {
            $0.transactionID = id
            $0.originalTransactionID = claims.originalTransactionId ?? id
            $0.productID = product
            $0.quantity = claims.quantity ?? 1
            $0.purchaseDateMs = milliseconds(purchased)
            $0.originalPurchaseDateMs = milliseconds(claims.originalPurchaseDate ?? purchased)
            if let expires = claims.expiresDate { $0.expiresDateMs = milliseconds(expires) }
            if let revoked = claims.revocationDate { $0.cancellationDateMs = milliseconds(revoked) }
            if let reason = claims.revocationReason { $0.cancellationReason = reason }
            $0.isUpgraded = claims.isUpgraded ?? false
            $0.webOrderLineItemID = claims.webOrderLineItemId ?? ""
            $0.subscriptionGroupIdentifier = claims.subscriptionGroupIdentifier ?? ""
            $0.ownershipType = claims.inAppOwnershipType == "FAMILY_SHARED" ? .familyShared : .purchased
            // offerType: 1 introductory, 2 promotional, 3 offer code (4 win-back).
            $0.isInIntroOfferPeriod = claims.offerType == 1
            if claims.offerType == 2 { $0.promotionalOfferID = claims.offerIdentifier ?? "" }
            if claims.offerType == 3 { $0.offerCodeRefName = claims.offerIdentifier ?? "" }
        }
    }

    static func pendingRenewal(_ claims: SignedRenewalClaims) -> PendingRenewal {
        PendingRenewal.with {
            $0.originalTransactionID = claims.originalTransactionId ?? ""
            $0.productID = claims.productId ?? ""
            $0.autoRenewProductID = claims.autoRenewProductId ?? ""
            if let status = claims.autoRenewStatus { $0.autoRenewStatus = status == 1 }
            if let intent = claims.expirationIntent { $0.expirationIntent = intent }
            $0.isInBillingRetryPeriod = claims.isInBillingRetryPeriod ?? false
            if let grace = claims.gracePeriodExpiresDate { $0.gracePeriodExpiresDateMs = milliseconds(grace) }
            if let consent = claims.priceIncreaseStatus { $0.priceConsentStatus = consent }
            $0.offerCodeRefName = claims.offerIdentifier ?? ""
        }
    }

    static func milliseconds(_ value: Double) -> Int64 { Int64(value.rounded(.down)) }

    static func invalid(_ message: String) -> ServiceFailure { ServiceFailure(.receiptInvalid, message: message) }
}
