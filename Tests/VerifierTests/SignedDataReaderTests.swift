import AppleJWS
import Contracts
import Foundation
import Testing
import X509

@testable import Verifier

/// StoreKit 2 and notification v2 JWS, decoded into the contracts the ledger
/// records: real notifications Apple signed in 2025, and payloads the
/// simulator's test chain signs to reach cases no real fixture shows.
@Suite("SignedDataReader: signed payloads into the ledger's contracts")
struct SignedDataReaderTests {
    static let sessionBundle = "com.loki-project.loki-messenger"
    let apple = try! SignedDataVerifier.appleRoots()
    let withSimulator = try! SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM])

    static func signedPayload(_ name: String) throws -> String {
        let url = try #require(
            Bundle.module.url(
                forResource: name, withExtension: "json", subdirectory: "Fixtures/notifications-v2/real-apple/session-sandbox-2025"))
        let body = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        return try #require(body?["signedPayload"] as? String)
    }

    /// The real notifications are checked on 2025-10-02, when they were new: their leaf expires in 2027.
    static let realNotificationsTime = Date(timeIntervalSince1970: 1_759_363_200)

    func reader(_ roots: [Certificate], bundles: [String] = ["com.example.app"], at time: Date? = nil) -> SignedDataReader {
        let verifier =
            time.map { time in SignedDataVerifier(trustedRoots: roots, validationTime: { time }) }
            ?? SignedDataVerifier(trustedRoots: roots)
        return SignedDataReader(verifier: verifier, bundleIDs: bundles)
    }

    /// Apple's roots as of when the real notifications were signed, for their app.
    var real: SignedDataReader { reader(apple, bundles: [Self.sessionBundle], at: Self.realNotificationsTime) }

    @Test func aRealRenewalBecomesTheLedgersNotification() async throws {
        let notification = try await real.notification(try Self.signedPayload("01-did-renew"), receivedAtMs: 5)
        #expect(notification.notificationID == "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7")
        #expect(notification.version == .v2)
        #expect(notification.notificationType == "DID_RENEW")
        #expect(notification.environment == .sandbox)
        #expect(notification.bundleID == Self.sessionBundle)
        #expect(notification.originalTransactionID == "2000001024993299")
        #expect(notification.receivedAtMs == 5)
        let transaction = try #require(notification.transactions.first)
        #expect(transaction.transactionID == "2000001024998954")
        #expect(transaction.productID == "com.getsession.org.pro_sub")
        #expect(transaction.purchaseDateMs == 1_759_302_552_000)
        #expect(transaction.expiresDateMs == 1_759_302_732_000)
        #expect(!transaction.hasCancellationDateMs)
        // What Apple charged (A$1.99 in the Australian storefront), for consumption information's lifetime spend.
        #expect(transaction.priceMilliunits == 1_990 && transaction.currency == "AUD")
        let renewal = try #require(notification.pendingRenewals.first)
        #expect(renewal.originalTransactionID == "2000001024993299")
        #expect(renewal.autoRenewStatus == true && notification.autoRenewStatus == true)
    }

    @Test func aRealRefundCarriesTheRevocationAsACancellation() async throws {
        let notification = try await real.notification(try Self.signedPayload("14-refund"), receivedAtMs: 0)
        #expect(notification.notificationType == "REFUND")
        let transaction = try #require(notification.transactions.first)
        #expect(transaction.hasCancellationDateMs && transaction.cancellationDateMs > 0)
        #expect(transaction.cancellationReason == 0)
    }

    @Test func aRealExpiryAndAutoRenewChangeCarryTheirRenewalInfo() async throws {
        let disabled = try await real.notification(
            try Self.signedPayload("03-did-change-renewal-status-auto-renew-disabled"), receivedAtMs: 0)
        #expect(disabled.subtype == "AUTO_RENEW_DISABLED")
        #expect(disabled.autoRenewStatus == false)
        let expired = try await real.notification(try Self.signedPayload("04-expired-voluntary"), receivedAtMs: 0)
        #expect(expired.notificationType == "EXPIRED" && expired.subtype == "VOLUNTARY")
        #expect(expired.pendingRenewals.first?.expirationIntent == 1)
        #expect(expired.pendingRenewals.first?.isInBillingRetryPeriod == false)
    }

    @Test func withSandboxRefusedARealSandboxNotificationIsSandboxNotAccepted() async throws {
        let verifier = SignedDataVerifier(trustedRoots: apple, validationTime: { Self.realNotificationsTime })
        let refusing = SignedDataReader(verifier: verifier, bundleIDs: [Self.sessionBundle], acceptSandbox: false)
        await #expect(throws: ServiceFailure(.sandboxNotAccepted, message: "sandbox purchases are not accepted here")) {
            try await refusing.notification(try Self.signedPayload("01-did-renew"), receivedAtMs: 0)
        }
    }

    @Test func anotherAppsNotificationIsABundleMismatch() async throws {
        await #expect(throws: ServiceFailure(.bundleMismatch, message: "the signed data belongs to another app")) {
            try await reader(apple, bundles: ["com.example.other"], at: Self.realNotificationsTime)
                .notification(try Self.signedPayload("01-did-renew"), receivedAtMs: 0)
        }
    }

    @Test func withNoBundleConfiguredNoSignedDataIsAccepted() async throws {
        let payload = try Self.signedPayload("01-did-renew")
        do {
            _ = try await reader(apple, bundles: [], at: Self.realNotificationsTime).notification(payload, receivedAtMs: 0)
            Issue.record("signed data was accepted with no STOREKEEPER_BUNDLE_IDS")
        } catch {
            #expect(error.failureCode == .bundleMismatch)
        }
    }

    @Test func aNotificationUnderAnUntrustedRootIsSignatureInvalid() async throws {
        let forged = try SignedDataSigner.simulator().sign(Array(#"{"notificationType":"TEST","notificationUUID":"x"}"#.utf8))
        do {
            _ = try await reader(apple).notification(forged, receivedAtMs: 0)
            Issue.record("a notification under the simulator's root verified without configuration")
        } catch {
            #expect(error.failureCode == .signatureInvalid)
        }
    }

    // MARK: Signed by the simulator's chain (trusted by configuration)

    static func signed(_ claims: [String: Any]) throws -> String {
        try SignedDataSigner.simulator().sign(Array(try JSONSerialization.data(withJSONObject: claims)))
    }

    static func transactionClaims(_ overrides: [String: Any] = [:]) -> [String: Any] {
        [
            "transactionId": "2000000000000001", "originalTransactionId": "2000000000000000",
            "bundleId": "com.example.app", "productId": "com.example.pro.monthly", "purchaseDate": 1_700_000_000_000,
            "originalPurchaseDate": 1_699_000_000_000, "expiresDate": 1_702_592_000_000.75, "quantity": 1,
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": "FAMILY_SHARED", "signedDate": 1_700_000_000_100,
            "environment": "Production", "offerType": 2, "offerIdentifier": "winback",
        ].merging(overrides) { $1 }
    }

    @Test func aSignedTransactionBecomesAVerifyResultOfOneTransaction() async throws {
        let jws = try Self.signed(Self.transactionClaims())
        let result = try await reader(withSimulator, bundles: ["com.example.app"]).transaction(jws, nowMs: 42)
        #expect(result.style == .signedTransaction)
        #expect(result.environment == .production)
        #expect(result.bundleID == "com.example.app")
        #expect(result.appleStatus == 0 && result.requestDateMs == 42)
        #expect(result.receiptSha256.count == 64)
        let transaction = try #require(result.transactions.first)
        #expect(result.transactions.count == 1)
        #expect(transaction.transactionID == "2000000000000001")
        #expect(transaction.originalTransactionID == "2000000000000000")
        #expect(transaction.expiresDateMs == 1_702_592_000_000)
        #expect(transaction.ownershipType == .familyShared)
        #expect(transaction.promotionalOfferID == "winback")
    }

    @Test func aRevokedSignedTransactionIsACancellation() async throws {
        let jws = try Self.signed(Self.transactionClaims(["revocationDate": 1_700_500_000_000, "revocationReason": 1]))
        let transaction = try #require(try await reader(withSimulator).transaction(jws, nowMs: 0).transactions.first)
        #expect(transaction.cancellationDateMs == 1_700_500_000_000)
        #expect(transaction.cancellationReason == 1)
    }

    @Test func aSignedPayloadThatIsNotAJSONObjectIsRefused() async throws {
        for payload in ["[1]", "not json", ""] {
            let jws = try SignedDataSigner.simulator().sign(Array(payload.utf8))
            do {
                _ = try await reader(withSimulator).transaction(jws, nowMs: 0)
                Issue.record("the payload \(payload) was accepted")
            } catch {
                #expect(error.failureCode == .receiptInvalid)
            }
        }
    }

    @Test func datesThatAreNotTimesAreRefusedNotTrapped() async throws {
        for date in [1e300, -5.0] {
            let jws = try Self.signed(Self.transactionClaims(["expiresDate": date]))
            await #expect(throws: ServiceFailure.self) { try await reader(withSimulator).transaction(jws, nowMs: 0) }
        }
    }

    @Test func onlyAnOfferCodeNamesTheRenewalsOfferCode() async throws {
        for (type, expected) in [(3, "SPRING"), (2, ""), (4, "")] {
            let renewal = try Self.signed([
                "originalTransactionId": "2000000000000000", "environment": "Production", "autoRenewStatus": 1,
                "offerType": type, "offerIdentifier": type == 3 ? "SPRING" : "promo",
            ])
            let payload = try Self.signed([
                "notificationType": "DID_CHANGE_RENEWAL_PREF", "notificationUUID": UUID().uuidString,
                "data": ["bundleId": "com.example.app", "environment": "Production", "signedRenewalInfo": renewal],
            ])
            let notification = try await reader(withSimulator).notification(payload, receivedAtMs: 0)
            #expect(notification.pendingRenewals.first?.offerCodeRefName == expected)
        }
    }

    @Test("claims Storekeeper cannot record are refused", arguments: [
        ["environment": "Xcode"], ["environment": "LocalTesting"], ["bundleId": "com.example.other"], ["productId": ""],
        ["transactionId": ""],
    ] as [[String: String]])
    func unusableClaimsAreRefused(_ overrides: [String: String]) async throws {
        let jws = try Self.signed(Self.transactionClaims(overrides))
        do {
            _ = try await reader(withSimulator, bundles: ["com.example.app"]).transaction(jws, nowMs: 0)
            Issue.record("claims \(overrides) were accepted")
        } catch {
            let expected: FailureCode = overrides["bundleId"] != nil ? .bundleMismatch : .receiptInvalid
            #expect(error.failureCode == expected)
        }
    }

    @Test func applesFullTransactionModelDecodesEveryFieldTheLedgerUses() async throws {
        let url = try #require(
            Bundle.module.url(
                forResource: "transaction-revoked-prorated", withExtension: "json",
                subdirectory: "Fixtures/notifications-v2/decoded-claims"))
        var claims = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        // Apple's model says LocalTesting, which Storekeeper refuses: as signed by Apple's tool, it is not a purchase.
        await #expect(throws: ServiceFailure.self) {
            try await reader(withSimulator, bundles: ["com.example"]).transaction(try Self.signed(claims), nowMs: 0)
        }
        claims["environment"] = "Sandbox"
        let result = try await reader(withSimulator, bundles: ["com.example"]).transaction(try Self.signed(claims), nowMs: 0)
        let transaction = try #require(result.transactions.first)
        #expect(result.environment == .sandbox)
        #expect(transaction.transactionID == "23456" && transaction.originalTransactionID == "12345")
        #expect(transaction.webOrderLineItemID == "34343" && transaction.subscriptionGroupIdentifier == "55555")
        #expect(transaction.purchaseDateMs == 1_698_148_900_000 && transaction.originalPurchaseDateMs == 1_698_148_800_000)
        #expect(transaction.expiresDateMs == 1_698_149_000_000)
        #expect(transaction.cancellationDateMs == 1_698_148_950_000 && transaction.cancellationReason == 1)
        #expect(transaction.isUpgraded && transaction.isInIntroOfferPeriod)
        #expect(transaction.ownershipType == .purchased)
    }

    @Test func nestedDataFromAnotherEnvironmentOrSubscriptionIsRefused() async throws {
        let transaction = try Self.signed(Self.transactionClaims(["environment": "Sandbox"]))
        let renewal = try Self.signed(["originalTransactionId": "999", "environment": "Production", "autoRenewStatus": 1])
        for (nestedTransaction, nestedRenewal) in [(transaction, nil), (try Self.signed(Self.transactionClaims()), renewal)] {
            var data: [String: Any] = ["bundleId": "com.example.app", "environment": "Production", "signedTransactionInfo": nestedTransaction]
            if let nestedRenewal { data["signedRenewalInfo"] = nestedRenewal }
            let payload = try Self.signed([
                "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString, "signedDate": 1, "data": data,
            ])
            do {
                _ = try await reader(withSimulator).notification(payload, receivedAtMs: 0)
                Issue.record("inconsistent nested data was accepted")
            } catch {
                #expect(error.failureCode == .receiptInvalid)
            }
        }
    }

    @Test func aTestNotificationNamesNoPurchase() async throws {
        let payload = try Self.signed([
            "notificationType": "TEST", "notificationUUID": "t-1",
            "data": ["bundleId": "com.example.app", "environment": "Sandbox"],
        ])
        let notification = try await reader(withSimulator).notification(payload, receivedAtMs: 0)
        #expect(notification.notificationType == "TEST")
        #expect(notification.originalTransactionID.isEmpty && notification.transactions.isEmpty)
    }
}
