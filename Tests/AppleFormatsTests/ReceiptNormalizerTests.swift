import Foundation
import Contracts
import Testing

@testable import AppleFormats

@Suite struct ReceiptNormalizerTests {
    func normalized(_ fixture: String, _ environment: AppleEnvironment = .sandbox) throws -> VerifyResult {
        let response = try AppleResponse(body: try Fixture.bytes(fixture))
        #expect(response.statusClass == .valid)
        return ReceiptNormalizer.normalize(response, environment: environment, receiptSHA256: "digest")
    }

    /// Greatest expiry over a subscription's transactions: what the ledger will compute.
    func maxExpiry(_ result: VerifyResult, _ originalTransactionID: String) -> Int64? {
        result.transactions.filter { $0.originalTransactionID == originalTransactionID && $0.hasExpiresDateMs }
            .map(\.expiresDateMs).max()
    }

    @Test func ios7AnonymizedMergesInAppAndLatestReceiptInfo() throws {
        let result = try normalized("status0-ios7-autorenew-42-inapp-anonymized")
        #expect(result.style == .ios7)
        #expect(result.bundleID == "com.some.thing")
        #expect(result.environment == .sandbox)
        #expect(result.latestReceipt == "ZmFrZV9kYXRh")
        #expect(result.transactions.count == 43)
        #expect(Set(result.transactions.map(\.transactionID)).count == 43)
        #expect(maxExpiry(result, "1000000723811158") == 1_611_147_900_000)
        let latest = try #require(result.transactions.first { $0.transactionID == "1000000767477815" })
        #expect(latest.productID == "one_month_subscription")
        #expect(latest.ownershipType == .purchased)
        #expect(latest.subscriptionGroupIdentifier == "20667927")
        #expect(latest.webOrderLineItemID == "1000000059265094")
        #expect(latest.purchaseDateMs == 1_611_147_600_000)
        #expect(latest.originalPurchaseDateMs == 1_601_297_754_000)
        #expect(!latest.isTrialPeriod && !latest.isInIntroOfferPeriod)
        let renewal = try #require(result.pendingRenewals.first)
        #expect(renewal.originalTransactionID == "1000000723811158")
        #expect(renewal.autoRenewStatus == false)
        #expect(renewal.expirationIntent == 1)
        #expect(renewal.isInBillingRetryPeriod == false)
        #expect(renewal.autoRenewProductID == "one_month_subscription")
    }

    @Test func numbersAsIntegersAndBooleansAsJSONBooleans() throws {
        let result = try normalized("status0-ios7-numbers-as-ints")
        #expect(result.bundleID == "com.myapp")
        #expect(result.transactions.count == 4)
        let first = try #require(result.transactions.first { $0.transactionID == "1000000104232856" })
        #expect(first.originalTransactionID == "1000000093384828")
        #expect(first.expiresDateMs == 1_394_619_485_000)
        #expect(first.quantity == 1)
        #expect(first.webOrderLineItemID == "1000000027948608")
        #expect(result.transactions.map(\.purchaseDateMs) == result.transactions.map(\.purchaseDateMs).sorted())
    }

    @Test func ios6LegacyReceiptIsOneTransactionWithExpiryFromMillisecondString() throws {
        let result = try normalized("status0-ios6-autorenew-legacy", .production)
        #expect(result.style == .ios6)
        #expect(result.bundleID == "com.example.001")
        #expect(result.applicationVersion == "7")
        #expect(result.transactions.count == 1)
        let t = try #require(result.transactions.first)
        #expect(t.transactionID == "1000000059630000")
        #expect(t.productID == "com.example.premium.1y")
        #expect(t.expiresDateMs == 1_354_436_154_000)
        #expect(t.purchaseDateMs == 1_354_432_554_000)
        #expect(result.environment == .production)
        #expect(result.pendingRenewals.isEmpty)
    }

    @Test func status21006StillCarriesTheDecodedReceiptAndTopLevelRenewalFields() throws {
        let result = try normalized("status21006-ios6-expired-autorenew", .production)
        #expect(result.appleStatus == 21006)
        #expect(result.style == .ios6)
        #expect(result.bundleID == "com.foo.bar")
        let t = try #require(result.transactions.first)
        #expect(result.transactions.count == 1)
        #expect(t.expiresDateMs == 1_550_386_188_000)
        #expect(t.isTrialPeriod)
        let renewal = try #require(result.pendingRenewals.first)
        #expect(renewal.originalTransactionID == "140000527258824")
        #expect(renewal.autoRenewStatus == false)
        #expect(renewal.expirationIntent == 1)
        #expect(renewal.isInBillingRetryPeriod == false)
        #expect(renewal.autoRenewProductID == "com.foo.product1")
    }

    @Test func maskedIOS6IntegerAutoRenewStatus() throws {
        let result = try normalized("status0-ios6-masked-int-auto-renew-status")
        #expect(result.transactions.count == 1)
        #expect(result.transactions.first?.expiresDateMs == 1_506_524_970_000)
        #expect(result.pendingRenewals.first?.autoRenewStatus == true)
    }

    @Test func production2014WithOnlyAGMTExpiryString() throws {
        let result = try normalized("status0-ios7-production-2014", .production)
        let t = try #require(result.transactions.first)
        #expect(t.expiresDateMs == 1_403_966_873_000)  // 2014-06-28 14:47:53 GMT
        #expect(result.receiptCreationDateMs == 1_401_924_047_883)
        #expect(result.pendingRenewals.first?.originalTransactionID == "37xxxxxxxxx89")
    }

    @Test func renewalInfoWithoutOriginalTransactionIDIsAttributedByProduct() throws {
        let result = try normalized("status0-sandbox-5min-renewals-no-otid-in-pending")
        #expect(result.transactions.count == 18)
        #expect(maxExpiry(result, "1000000318012065") == 1_500_975_210_000)
        #expect(result.pendingRenewals.map(\.originalTransactionID) == ["1000000318012065"])
    }

    @Test func upgradeWithinGroupKeepsBothProductsOnOneSubscription() throws {
        let result = try normalized("status0-sandbox-upgrade-pair-revenuecat")
        #expect(result.transactions.count == 9)
        #expect(Set(result.transactions.map(\.originalTransactionID)) == ["1000000692878476"])
        #expect(maxExpiry(result, "1000000692878476") == 1_595_443_146_000)
        // in_app is not chronological in this answer; the result is.
        #expect(result.transactions.first?.transactionID == "1000000692878476")
        #expect(result.transactions.last?.productID == "com.revenuecat.annual_39.99.2_week_intro")
        #expect(result.pendingRenewals.first?.autoRenewStatus == true)
    }

    @Test func failureStatusesAreClassified() throws {
        let invalid = try AppleResponse(body: try Fixture.bytes("status21002"))
        #expect(invalid.status == 21002)
        #expect(invalid.statusClass == .malformedRetryOnce)
        let underscore = try AppleResponse(body: try Fixture.bytes("status21010-is_retryable-underscore"))
        #expect(underscore.isRetryable == false)
        #expect(underscore.statusClass == .invalid)
    }
}

@Suite struct AppleStatusTests {
    @Test(arguments: [
        (0, nil, AppleStatusClass.valid), (21006, nil, .valid), (21007, nil, .sandboxReceiptAtProduction),
        (21008, nil, .productionReceiptAtSandbox), (21002, nil, .malformedRetryOnce), (21003, nil, .invalid),
        (21010, nil, .invalid), (21004, nil, .sharedSecretMismatch), (21000, nil, .rejectedRequest),
        (21005, nil, .retryable), (21009, nil, .retryable), (21100, true, .retryable), (21150, false, .invalid),
        (21199, nil, .retryable), (21200, nil, .invalid),
    ] as [(Int, Bool?, AppleStatusClass)])
    func classification(status: Int, retryable: Bool?, expected: AppleStatusClass) {
        #expect(AppleStatus.classify(status, isRetryable: retryable) == expected)
    }

    @Test(arguments: [
        (#"{"status":21105,"is-retryable":true}"#, true), (#"{"status":21105,"is_retryable":1}"#, true),
        (#"{"status":21105,"is_retryable":"0"}"#, false), (#"{"status":"21105","is-retryable":"false"}"#, false),
    ])
    func everySpellingOfIsRetryable(body: String, expected: Bool) throws {
        let response = try AppleResponse(body: Array(body.utf8))
        #expect(response.isRetryable == expected)
        #expect(response.status == 21105)
    }

    @Test(arguments: ["<html>502 Bad Gateway</html>", "", "[]", #"{"receipt":{}}"#, #"{"status":"ok"}"#])
    func unreadableBodiesAreNotMistakenForAnAnswer(body: String) {
        #expect(throws: AppleResponse.Unreadable.self) { try AppleResponse(body: Array(body.utf8)) }
    }
}

@Suite struct LatestReceiptInfoFragmentTests {
    /// The fixture is a bare `latest_receipt_info` array (six 5-minute sandbox renewals):
    /// wrapped into an answer, the greatest expiry wins whatever the order.
    @Test func sandboxRenewalsGiveTheGreatestExpiry() throws {
        let fragment = String(decoding: try Fixture.bytes("latest-receipt-info-sandbox-5min-renewals"), as: UTF8.self)
        let body = #"{"status":0,"receipt":{"bundle_id":"b","in_app":[]},"latest_receipt_info":"# + fragment + "}"
        let response = try AppleResponse(body: Array(body.utf8))
        let result = ReceiptNormalizer.normalize(response, environment: .sandbox, receiptSHA256: "d")
        #expect(result.transactions.count == 6)
        #expect(Set(result.transactions.map(\.originalTransactionID)).count == 1)
        let expiries = result.transactions.map(\.expiresDateMs)
        #expect(expiries.allSatisfy { $0 > 0 })
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(fragment.utf8)) as? [Any])
        let reversedFragment = try JSONSerialization.data(withJSONObject: Array(entries.reversed()))
        let reversed = #"{"status":0,"receipt":{"bundle_id":"b","in_app":[]},"latest_receipt_info":"#
            + String(decoding: reversedFragment, as: UTF8.self) + "}"
        let again = ReceiptNormalizer.normalize(try AppleResponse(body: Array(reversed.utf8)), environment: .sandbox, receiptSHA256: "d")
        #expect(again.transactions.map(\.expiresDateMs).max() == expiries.max())
        #expect(again.transactions.map(\.transactionID) == result.transactions.map(\.transactionID))
    }
}
