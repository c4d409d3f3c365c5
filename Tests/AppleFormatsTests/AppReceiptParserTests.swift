import Foundation
import Testing

@testable import AppleFormats

/// Real app receipts from public sources (Fixtures/app-receipts/SOURCES.md),
/// read with the values their sources state: Apple's library test, the
/// verifyReceipt answer or notification for the same receipt, or (where the
/// source states none) an independent decoding with `openssl cms`.
@Suite struct AppReceiptParserTests {
    static func parsed(_ name: String) throws -> AppReceipt {
        try AppReceiptParser.parse(base64: try AppReceiptFixture.base64(name))
    }

    /// Apple's ReceiptUtilityTests: this receipt's transaction id is "0".
    @Test func xcodeReceiptWithATransactionAsApplesLibraryReadsIt() throws {
        let receipt = try Self.parsed("xcode-app-receipt-with-transaction")
        #expect(receipt.anyTransactionID == "0")
        #expect(receipt.transactionIDs == ["0"])
        #expect(receipt.receiptType == "Xcode")
        #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.appVersion == "1")
        let purchase = try #require(receipt.inAppPurchases.first)
        #expect(purchase.productID == "pass.premium")
        #expect(purchase.quantity == 1)
        #expect(purchase.originalTransactionID == nil)
        #expect(purchase.purchaseDateMs == 1_697_679_936_000)  // 2023-10-19T01:45:36Z
        #expect(purchase.expiresDateMs == 1_700_358_336_000)  // 2023-11-19T01:45:36Z
        #expect(purchase.isInIntroOfferPeriod == true)
    }

    /// Apple's ReceiptUtilityTests: no transaction id. Indefinite-length BER
    /// throughout, the content in a constructed OCTET STRING.
    @Test func xcodeReceiptWithoutPurchases() throws {
        #expect(try AppReceiptFixture.der("xcode-app-receipt-empty").prefix(2) == [0x30, 0x80])
        let receipt = try Self.parsed("xcode-app-receipt-empty")
        #expect(receipt.anyTransactionID == nil)
        #expect(receipt.inAppPurchases.isEmpty)
        #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.creationDateMs == 1_697_678_334_000)  // 2023-10-19T01:18:54Z
        #expect(receipt.expirationDateMs == 64_092_211_200_000)  // 4001-01-01T00:00:00Z
    }

    /// Xcode 12 wrote "+0100" for the offset; the instant is 17:33:14 UTC.
    @Test func xcodeReceiptOf2020WithOffsetDates() throws {
        let receipt = try Self.parsed("xcode-2020-offset-without-colon")
        #expect(receipt.bundleID == "net.zachariadis.cyclemaps")
        #expect(receipt.appVersion == "31.10.0")
        #expect(receipt.transactionIDs == ["0"])
        let purchase = try #require(receipt.inAppPurchases.first)
        #expect(purchase.productID == "CYCLEMAPS_PREMIUM")
        #expect(purchase.purchaseDateMs == 1_595_439_194_000)  // 2020-07-22T18:33:14+0100
        #expect(receipt.expirationDateMs == 64_092_211_200_000)  // 4001-01-01T00:00:00+0000
    }

    /// RevenueCat's sandbox receipt beside the verifyReceipt answer Apple gave for it.
    @Test func sandboxReceiptSaysWhatVerifyReceiptSaid() throws {
        let receipt = try Self.parsed("sandbox-2020-revenuecat-matches-verifyreceipt")
        let answer = try JSONSerialization.jsonObject(with: Data(try Fixture.bytes("status0-sandbox-upgrade-pair-revenuecat")))
        let decoded = try #require((answer as? [String: Any])?["receipt"] as? [String: Any])
        #expect(receipt.receiptType == decoded["receipt_type"] as? String)
        #expect(receipt.bundleID == decoded["bundle_id"] as? String)
        #expect(receipt.appVersion == decoded["application_version"] as? String)
        #expect(receipt.originalAppVersion == decoded["original_application_version"] as? String)
        #expect(receipt.creationDateMs.map(String.init) == decoded["receipt_creation_date_ms"] as? String)
        #expect(receipt.originalPurchaseDateMs.map(String.init) == decoded["original_purchase_date_ms"] as? String)
        AppReceiptFixture.expectSame(receipt.inAppPurchases, as: try #require(decoded["in_app"] as? [[String: Any]]))
        #expect(receipt.anyTransactionID == "1000000692879214")
    }

    /// A real sandbox DID_CHANGE_RENEWAL_STATUS (GatewayTests' fixture): its
    /// `latest_receipt` holds the same 54 transactions as its `latest_receipt_info`.
    @Test func notificationsLatestReceiptSaysWhatItsLatestReceiptInfoSays() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("GatewayTests/Fixtures/did-change-renewal-status-sandbox-2020.json")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let unified = try #require(body["unified_receipt"] as? [String: Any])
        let receipt = try AppReceiptParser.parse(base64: try #require(unified["latest_receipt"] as? String))
        #expect(receipt.bundleID == body["bid"] as? String)
        #expect(receipt.receiptType == "ProductionSandbox")
        AppReceiptFixture.expectSame(receipt.inAppPurchases, as: try #require(unified["latest_receipt_info"] as? [[String: Any]]))
    }

    /// TPInAppReceipt's production receipt (SHA-256, WWDR G5): four renewals of one subscription.
    @Test func productionReceiptOf2024() throws {
        let receipt = try Self.parsed("production-2024-sha256")
        #expect(receipt.receiptType == "Production")
        #expect(receipt.bundleID == "org.getpure.pure-iphone")
        #expect(receipt.appVersion == "15741")
        #expect(receipt.originalAppVersion == "434")
        #expect(receipt.creationDateMs == 1_708_709_236_000)  // 2024-02-23T17:27:16Z
        #expect(receipt.transactionIDs == ["340001196262039", "340001237736590", "340001264290434", "340001311555626"])
        #expect(receipt.inAppPurchases.allSatisfy { $0.originalTransactionID == "340001196262039" })
        #expect(receipt.inAppPurchases.map(\.productID) == [
            "org.getpure.pure.Week", "org.getpure.pure.Month", "org.getpure.pure.Month", "org.getpure.pure.Month",
        ])
        #expect(receipt.inAppPurchases.allSatisfy { $0.cancellationDateMs == nil && $0.expiresDateMs != nil })
    }

    /// TPInAppReceipt's sandbox receipt of 2025: an "annual" product renewing every 36 minutes.
    @Test func sandboxReceiptOf2025() throws {
        let receipt = try Self.parsed("sandbox-2025-g5")
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.bundleID == "dev.bonzer.weeka.app")
        #expect(receipt.transactionIDs == ["2000001092134138", "2000001092148094"])
        #expect(receipt.inAppPurchases.map(\.webOrderLineItemID) == ["2000000123357229", "2000000123357230"])
        let first = try #require(receipt.inAppPurchases.first)
        let period = try #require(first.expiresDateMs) - (try #require(first.purchaseDateMs))
        #expect(period == 36 * 60_000)
    }

    /// TPInAppReceipt's large sandbox receipt: 187 purchases, 79 KB of DER.
    @Test func sandboxReceiptWith187Purchases() throws {
        let receipt = try Self.parsed("sandbox-2020-187-inapp")
        #expect(receipt.bundleID == "com.nutcall.alert")
        #expect(receipt.inAppPurchases.count == 187)
        #expect(Set(receipt.transactionIDs).count == 187)
        #expect(receipt.anyTransactionID == "1000000637840752")
        #expect(receipt.inAppPurchases.allSatisfy { $0.purchaseDateMs != nil && $0.productID != nil })
    }

    /// The content's octets whole, in BER chunks of indefinite length, or
    /// wrapped in one more OCTET STRING (as Apple's library says Xcode does).
    @Test func everyEncodingOfTheContentReadsAlike() throws {
        let payload = ReceiptBuilder.payload(transactionIDs: ["7", "8"])
        let whole = try AppReceiptParser.parse(der: ReceiptBuilder.container(payload))
        let chunks = [0x24, 0x80] + ReceiptBuilder.tlv(0x04, Array(payload[..<10])) + ReceiptBuilder.tlv(0x04, [])
            + ReceiptBuilder.tlv(0x04, Array(payload[10...])) + [0, 0]
        #expect(try AppReceiptParser.parse(der: ReceiptBuilder.container(octets: chunks)) == whole)
        #expect(try AppReceiptParser.parse(der: ReceiptBuilder.container(ReceiptBuilder.tlv(0x04, payload))) == whole)
        #expect(whole.transactionIDs == ["7", "8"])
    }

    @Test(arguments: AppReceiptFixture.all)
    func bytesAndLineWrappedBase64ReadAlike(_ name: String) throws {
        let text = try AppReceiptFixture.base64(name).filter { !$0.isWhitespace }
        var wrapped = ""
        for (offset, character) in text.enumerated() {
            if offset > 0, offset % 76 == 0 { wrapped += "\r\n" }
            wrapped.append(character)
        }
        let fromBytes = try AppReceiptParser.parse(der: try AppReceiptFixture.der(name))
        #expect(try AppReceiptParser.parse(base64: wrapped) == fromBytes)
        #expect(fromBytes.bundleID?.isEmpty == false)
    }
}
