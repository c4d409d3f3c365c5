import Foundation
import Testing

@testable import AppleFormats

/// The real app receipts in `Fixtures/app-receipts` (sources in its
/// SOURCES.md), and the check that a parsed receipt says what Apple's own
/// verifyReceipt answer for the same receipt says.
enum AppReceiptFixture {
    static let all = [
        "production-2024-sha256", "sandbox-2025-g5", "sandbox-2020-revenuecat-matches-verifyreceipt",
        "sandbox-2020-187-inapp", "xcode-app-receipt-empty", "xcode-app-receipt-with-transaction",
        "xcode-2020-offset-without-colon",
    ]

    static func base64(_ name: String) throws -> String {
        guard
            let url = Bundle.module.url(forResource: name, withExtension: "b64", subdirectory: "Fixtures/app-receipts")
        else { throw CocoaError(.fileNoSuchFile) }
        return try String(contentsOf: url, encoding: .utf8)
    }

    static func der(_ name: String) throws -> [UInt8] {
        let text = try base64(name).filter { !$0.isWhitespace }
        return Array(try #require(Data(base64Encoded: text)))
    }

    /// Every in-app purchase equals, in order, the verifyReceipt entry with its transaction id.
    static func expectSame(_ purchases: [AppReceipt.InAppPurchase], as entries: [[String: Any]]) {
        #expect(purchases.count == entries.count)
        let byID = Dictionary(entries.map { ($0["transaction_id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        for purchase in purchases {
            guard let entry = byID[purchase.transactionID ?? ""] else {
                Issue.record("no verifyReceipt entry for \(purchase.transactionID ?? "nil")")
                continue
            }
            #expect(purchase.originalTransactionID == entry["original_transaction_id"] as? String)
            #expect(purchase.productID == entry["product_id"] as? String)
            #expect(purchase.quantity.map(String.init) == entry["quantity"] as? String)
            #expect(purchase.purchaseDateMs.map(String.init) == entry["purchase_date_ms"] as? String)
            #expect(purchase.originalPurchaseDateMs.map(String.init) == entry["original_purchase_date_ms"] as? String)
            #expect(purchase.expiresDateMs.map(String.init) == entry["expires_date_ms"] as? String)
            #expect(purchase.webOrderLineItemID == entry["web_order_line_item_id"] as? String)
            #expect(purchase.cancellationDateMs.map(String.init) == entry["cancellation_date_ms"] as? String)
            #expect(purchase.isTrialPeriod.map(String.init) == entry["is_trial_period"] as? String)
            #expect(purchase.isInIntroOfferPeriod.map(String.init) == entry["is_in_intro_offer_period"] as? String)
        }
    }
}
