import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator

/// The simulator's receipts are app receipts in Apple's layout: the local
/// parser reads what was sold, and its verifyReceipt still knows them.
@Suite struct SimAppReceiptTests {
    let t0: Int64 = 1_700_000_000_000

    @Test func aReceiptHoldsEveryPurchaseOfTheAccountAsTheParserReadsThem() throws {
        var store = SimStore(bundleID: "com.example.storekeeper")
        let subscription = try store.purchase(
            account: "a", productID: "com.example.pro.monthly", type: .autoRenewable, period: .month, quantity: 1,
            environment: .sandbox, now: t0)
        _ = store.renewDue(now: try #require(subscription.expiresMs))
        let coins = try store.purchase(
            account: "a", productID: "com.example.coins100", type: .consumable, period: .month, quantity: 3,
            environment: .sandbox, now: t0 + 1_000)
        let receipt = try AppReceiptParser.parse(base64: coins.receiptData)
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.bundleID == "com.example.storekeeper")
        #expect(receipt.creationDateMs == t0 + 1_000)
        #expect(receipt.transactionIDs.count == 3)
        #expect(receipt.transactionIDs.first == subscription.transactionID)
        #expect(receipt.transactionIDs.last == coins.transactionID)
        let first = try #require(receipt.inAppPurchases.first)
        #expect(first.productID == "com.example.pro.monthly")
        #expect(first.originalTransactionID == subscription.originalTransactionID)
        #expect(first.purchaseDateMs == t0)
        #expect(first.expiresDateMs == subscription.expiresMs)
        #expect(first.webOrderLineItemID == subscription.transactionID + "1")
        #expect(first.cancellationDateMs == nil)
        let last = try #require(receipt.inAppPurchases.last)
        #expect(last.quantity == 3)
        #expect(last.expiresDateMs == nil)
    }

    @Test func aProductionReceiptSaysSoAndTwoReceiptsOfTheSamePurchasesDiffer() throws {
        var store = SimStore()
        let bought = try store.purchase(
            account: "b", productID: "com.example.removeads", type: .nonConsumable, period: .month, quantity: 1,
            environment: .production, now: t0)
        #expect(try AppReceiptParser.parse(base64: bought.receiptData).receiptType == "Production")
        let one = try SimAppReceipt.der(
            bundleID: "com.example.storekeeper", environment: .production, createdMs: t0,
            transactions: store.transactions(ofAccount: "b", .production))
        let other = try SimAppReceipt.der(
            bundleID: "com.example.storekeeper", environment: .production, createdMs: t0,
            transactions: store.transactions(ofAccount: "b", .production))
        #expect(one != other, "the opaque value and hash are random, as a device's are")
        #expect(try AppReceiptParser.parse(der: one) == AppReceiptParser.parse(der: other))
    }
}
