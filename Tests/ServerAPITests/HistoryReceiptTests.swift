import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// `STOREKEEPER_RECEIPT_VERIFICATION=server_api` against the simulator: its
/// app receipts read locally, their purchases from its signed history, and
/// the result set beside what its verifyReceipt answers for the same receipt.
@Suite("Receipts read with the Server API, against the simulator")
struct HistoryReceiptTests {
    static func request(_ receipt: String) -> VerifyRequest { .with { $0.receiptData = receipt } }

    /// Both modes' results for one receipt.
    static func bothWays(_ receipt: String, _ harness: ServerAPIHarness) async throws -> (history: VerifyResult, verifyReceipt: VerifyResult) {
        let history = try await harness.historyVerifier().verify(request(receipt), deadline: .now + .seconds(30), requestID: "req-h").get()
        let verified = try await harness.receiptVerifier().verify(request(receipt), deadline: .now + .seconds(30), requestID: "req-v").get()
        return (history, verified)
    }

    /// Why the verifier refused `receipt`, as the client hears it; nil when it read it.
    static func refusal(_ verifier: ReceiptVerifier, _ receipt: String) async -> FailureCode? {
        switch await verifier.verify(request(receipt), deadline: .now + .seconds(30), requestID: "req-r") {
        case .success: nil
        case .failure(let failure): failure.serviceFailure.failureCode
        }
    }

    @Test func aSubscriptionItsRenewalsARefundAndAConsumableAreWhatVerifyReceiptSays() async throws {
        try await ServerAPIHarness.with(pageSize: 2) { harness in
            let subscription = try harness.buy(account: "walk")
            for _ in 0..<2 { _ = try harness.simulator.renewNow(originalTransactionID: subscription.originalTransactionID) }
            let renewals = harness.simulator.state.withLock { $0.store.subscriptions[subscription.originalTransactionID]?.transactionIDs ?? [] }
            _ = try harness.simulator.refund(transactionID: renewals[1], reason: 1)
            _ = try harness.simulator.setAutoRenew(originalTransactionID: subscription.originalTransactionID, enabled: false)
            let coins = try harness.buy("com.example.coins100", type: .consumable, account: "walk")

            let (history, verified) = try await Self.bothWays(coins.receiptData, harness)
            #expect(history.environment == .sandbox && verified.environment == .sandbox)
            #expect(history.style == .ios7 && verified.style == .ios7)
            #expect(history.bundleID == verified.bundleID)
            #expect(history.appleStatus == 0)
            #expect(history.transactions.map(\.transactionID) == verified.transactions.map(\.transactionID))
            #expect(Set(history.transactions.map(\.transactionID)) == Set(renewals + [coins.transactionID]))
            for (fromHistory, fromVerifyReceipt) in zip(history.transactions, verified.transactions) {
                #expect(fromHistory.originalTransactionID == fromVerifyReceipt.originalTransactionID)
                #expect(fromHistory.productID == fromVerifyReceipt.productID)
                #expect(fromHistory.purchaseDateMs == fromVerifyReceipt.purchaseDateMs)
                #expect(fromHistory.expiresDateMs == fromVerifyReceipt.expiresDateMs)
                #expect(fromHistory.hasCancellationDateMs == fromVerifyReceipt.hasCancellationDateMs)
                #expect(fromHistory.cancellationDateMs == fromVerifyReceipt.cancellationDateMs)
            }
            #expect(history.pendingRenewals.map(\.originalTransactionID) == [subscription.originalTransactionID])
            #expect(history.pendingRenewals.first?.autoRenewStatus == false)
            #expect(history.pendingRenewals.first?.autoRenewStatus == verified.pendingRenewals.first?.autoRenewStatus)
            #expect(history.pendingRenewals.first?.autoRenewProductID == verified.pendingRenewals.first?.autoRenewProductID)
            #expect(history.latestReceipt == coins.receiptData, "a refresh reads the history again")
            #expect(history.receiptSha256 == verified.receiptSha256)

            // Every page of one history, the consumable it leaves out alone, then the renewal info, all at
            // sandbox once production's 4040010 said where the receipt's purchases are.
            let sandbox = harness.paths.filter { $0.hasPrefix("/sandbox/") }
            #expect(harness.paths.filter { $0.hasPrefix("/production/") } == ["/production/inApps/v2/history/\(subscription.transactionID)"])
            #expect(sandbox.filter { $0.contains("/v2/history/") }.count == 2, "3 transactions in the history, pages of 2: \(sandbox)")
            #expect(sandbox.filter { $0.contains("/v1/transactions/") } == ["/sandbox/inApps/v1/transactions/\(coins.transactionID)"])
            #expect(sandbox.filter { $0.contains("/v1/subscriptions/") } == ["/sandbox/inApps/v1/subscriptions/\(subscription.originalTransactionID)"])
        }
    }

    @Test func aProductionReceiptIsReadAtProductionOnly() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production, account: "prod")
            let (history, verified) = try await Self.bothWays(bought.receiptData, harness)
            #expect(history.environment == .production && verified.environment == .production)
            #expect(history.transactions.map(\.transactionID) == [bought.transactionID])
            #expect(history.transactions.first?.kind == .nonConsumable, "Apple's signed type comes along")
            #expect(history.pendingRenewals.isEmpty)
            #expect(harness.paths == ["/production/inApps/v2/history/\(bought.transactionID)"])
        }
    }

    @Test func aReceiptWithoutPurchasesGivesTheEmptyResultVerifyReceiptGives() async throws {
        try await ServerAPIHarness.with { harness in
            let empty = harness.simulator.state.withLock { state in
                state.store.mintReceipt(account: "nobody", environment: .sandbox, now: 1_700_000_000_000)
            }
            let (history, verified) = try await Self.bothWays(empty, harness)
            #expect(history.transactions.isEmpty && verified.transactions.isEmpty)
            #expect(history.environment == verified.environment)
            #expect(harness.paths.isEmpty)
        }
    }

    @Test func receiptsRefusedBeforeAnyCall() async throws {
        try await ServerAPIHarness.with { harness in
            let verifier = try harness.historyVerifier()
            let notAReceipt = Data("SKSIM1 not an app receipt".utf8).base64EncodedString()
            let otherApp = Data(
                try SimAppReceipt.der(bundleID: "com.example.other", environment: .production, createdMs: 0, transactions: [])
            ).base64EncodedString()
            #expect(await Self.refusal(verifier, notAReceipt) == .badReceiptEncoding)
            #expect(await Self.refusal(verifier, otherApp) == .bundleMismatch)
            let sandbox = try harness.buy(account: "sandbox-refused")
            #expect(await Self.refusal(try harness.historyVerifier(acceptSandbox: false), sandbox.receiptData) == .sandboxNotAccepted)
            #expect(harness.paths.isEmpty)
        }
    }

    @Test func aReceiptNamingPurchasesAppleDoesNotKnowCreditsNone() async throws {
        try await ServerAPIHarness.with { harness in
            let forged = SimTransaction(
                id: "2999999999999999", account: "forger", environment: .sandbox, originalID: "2999999999999999",
                productID: "com.example.pro.monthly", type: .autoRenewable, quantity: 1, purchaseMs: 1_700_000_000_000,
                originalPurchaseMs: 1_700_000_000_000, expiresMs: 1_800_000_000_000, webOrderLineItemID: nil, orderID: "X",
                revision: 1)
            let receipt = Data(
                try SimAppReceipt.der(
                    bundleID: ServerAPIHarness.bundleID, environment: .sandbox, createdMs: 1_700_000_000_000, transactions: [forged])
            ).base64EncodedString()
            #expect(await Self.refusal(try harness.historyVerifier(), receipt) == .receiptInvalid)
        }
    }

    @Test func aPurchaseMissingFromAProductionHistoryIsAskedForAtProductionOnly() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production, account: "prod")
            // The receipt lists the purchase and an id Apple does not know: one lookup, no sandbox fallback.
            let listed = [bought.transactionID, "2999999999999998"].map { id in
                SimTransaction(
                    id: id, account: "prod", environment: .production, originalID: id, productID: "com.example.removeads",
                    type: .nonConsumable, quantity: 1, purchaseMs: 1_700_000_000_000, originalPurchaseMs: 1_700_000_000_000,
                    expiresMs: nil, webOrderLineItemID: nil, orderID: "X", revision: 1)
            }
            let receipt = Data(
                try SimAppReceipt.der(
                    bundleID: ServerAPIHarness.bundleID, environment: .production, createdMs: 1_700_000_000_000,
                    transactions: listed)
            ).base64EncodedString()
            let history = try await harness.historyVerifier().verify(
                Self.request(receipt), deadline: .now + .seconds(30), requestID: "req-m"
            ).get()
            #expect(history.transactions.map(\.transactionID) == [bought.transactionID])
            #expect(
                harness.paths == [
                    "/production/inApps/v2/history/\(bought.transactionID)", "/production/inApps/v1/transactions/2999999999999998",
                ])
        }
    }
}
