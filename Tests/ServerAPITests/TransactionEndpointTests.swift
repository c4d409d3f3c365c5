import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// The calls about purchases, against the simulator over HTTP: what the
/// simulator sold is what the client gets back, verified.
@Suite("Server API against the simulator: transactions")
struct TransactionEndpointTests {
    @Test func transactionInfoOfAProductionPurchaseAsksProductionOnly() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production)
            let result = try await harness.client().transactionInfo(bought.transactionID)
            #expect(result.environment == .production)
            #expect(result.style == .signedTransaction)
            #expect(result.bundleID == ServerAPIHarness.bundleID)
            #expect(result.transactions.map(\.transactionID) == [bought.transactionID])
            #expect(result.transactions.first?.kind == .nonConsumable)
            #expect(harness.paths == ["/production/inApps/v1/transactions/\(bought.transactionID)"])
        }
    }

    @Test func aSandboxTransactionIsFoundAtSandboxAfterProductionsNotFound() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy()
            let result = try await harness.client().transactionInfo(bought.transactionID)
            #expect(result.environment == .sandbox)
            #expect(result.transactions.first?.expiresDateMs == bought.expiresMs)
            #expect(
                harness.paths == [
                    "/production/inApps/v1/transactions/\(bought.transactionID)",
                    "/sandbox/inApps/v1/transactions/\(bought.transactionID)",
                ])
        }
    }

    @Test func anUnknownTransactionIsNotFoundAfterBothEnvironments() async throws {
        try await ServerAPIHarness.with { harness in
            await #expect(throws: ServerAPIError.notFound(.transactionIdNotFound)) {
                try await harness.client().transactionInfo("1999999999999999")
            }
            #expect(harness.paths.count == 2)
        }
    }

    @Test func withoutSandboxTheSandboxIsNeverAsked() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy()
            await #expect(throws: ServerAPIError.notFound(.transactionIdNotFound)) {
                try await harness.client(acceptSandbox: false).transactionInfo(bought.transactionID)
            }
            #expect(harness.paths == ["/production/inApps/v1/transactions/\(bought.transactionID)"])
        }
    }

    @Test func theHistoryFetchesEveryPageAndResumesFromItsRevision() async throws {
        try await ServerAPIHarness.with(pageSize: 2) { harness in
            let subscription = try harness.buy()
            _ = try harness.buy("com.example.removeads", type: .nonConsumable)
            _ = try harness.buy("com.example.gems", type: .consumable)
            for _ in 0..<3 { _ = try harness.simulator.renewNow(originalTransactionID: subscription.originalTransactionID) }
            let client = try harness.client()
            let history = try await client.transactionHistory(subscription.originalTransactionID)
            #expect(history.environment == .sandbox)
            // Four of the subscription and the non-consumable; the consumable counts as finished, as at Apple.
            #expect(history.transactions.count == 5)
            #expect(Set(history.transactions.map(\.productID)) == ["com.example.pro.monthly", "com.example.removeads"])
            #expect(history.signedTransactions.count == 5)
            let pages = harness.paths.filter { $0.hasPrefix("/sandbox/inApps/v2/history/") }
            #expect(pages.count == 3, "two, two and one: \(pages)")
            #expect(pages.dropFirst().allSatisfy { $0.contains("?revision=") })

            // Later: one renewal and one refund, and only those come back.
            let renewed = try harness.simulator.renewNow(originalTransactionID: subscription.originalTransactionID)
            _ = try harness.simulator.refund(transactionID: subscription.transactionID, reason: 0)
            let changes = try await client.transactionHistory(subscription.originalTransactionID, since: history.revision)
            #expect(changes.transactions.count == 2)
            #expect(changes.transactions.contains { $0.transactionID == subscription.transactionID && $0.hasCancellationDateMs })
            #expect(renewed.notifications.compactMap(\.transactionID).allSatisfy { id in changes.transactions.contains { $0.transactionID == id } })
        }
    }

    @Test func theRefundHistoryListsRefundedTransactions() async throws {
        try await ServerAPIHarness.with { harness in
            let subscription = try harness.buy()
            let gems = try harness.buy("com.example.gems", type: .consumable)
            #expect(try await harness.client().refundHistory(subscription.transactionID).transactions.isEmpty)
            _ = try harness.simulator.refund(transactionID: gems.transactionID, reason: 1)
            let refunds = try await harness.client().refundHistory(subscription.transactionID)
            #expect(refunds.transactions.map(\.transactionID) == [gems.transactionID])
            #expect(refunds.transactions.first?.cancellationReason == 1)
        }
    }

    @Test func statusesGiveEachSubscriptionsLatestTransactionAndRenewalInfo() async throws {
        try await ServerAPIHarness.with { harness in
            let monthly = try harness.buy(environment: .production)
            let yearly = try harness.buy("com.example.pro.yearly", environment: .production)
            _ = try harness.simulator.setAutoRenew(originalTransactionID: yearly.originalTransactionID, enabled: false)
            let statuses = try await harness.client().subscriptionStatuses(monthly.transactionID)
            #expect(statuses.environment == .production)
            #expect(statuses.subscriptions.map(\.originalTransactionID) == [monthly.originalTransactionID, yearly.originalTransactionID])
            #expect(statuses.subscriptions.allSatisfy { $0.status == 1 && $0.subscriptionGroupIdentifier == "20000001" })
            #expect(statuses.subscriptions.map { $0.renewal?.autoRenewStatus } == [true, false])

            _ = try harness.simulator.refund(transactionID: monthly.transactionID, reason: 0)
            let after = try await harness.client().subscriptionStatuses(monthly.transactionID)
            #expect(after.subscriptions.first?.status == 5, "revoked")
        }
    }

    @Test func anOrderIdGivesItsTransactionAndAnUnknownOneIsInvalid() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production)
            let order = try await harness.client().lookUpOrder(bought.orderID)
            #expect(order.isValid)
            #expect(order.transactions.transactions.map(\.transactionID) == [bought.transactionID])
            let unknown = try await harness.client().lookUpOrder("SIMNOSUCHORDER")
            #expect(!unknown.isValid)
            #expect(unknown.transactions.transactions.isEmpty)
        }
    }
}
