import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// The ledger's App Store Server API requests as a verifier answers them
/// (`ServerAPIPoolRequests`), against the simulator: statuses as a
/// `VerifyResult`, notification history as the ledger applies it,
/// consumption information as Apple receives it, and a verifier with no key.
@Suite("Server API against the simulator: the ledger's pool requests")
struct LedgerPoolRequestTests {
    func answer(_ harness: ServerAPIHarness, _ body: Envelope.OneOf_Body) async throws -> Envelope.OneOf_Body? {
        let requests = ServerAPIPoolRequests(client: try harness.client())
        return await requests.answer(body, deadline: .now + .seconds(30), nowMs: harness.simulator.now)
    }

    @Test func statusesComeBackAsAVerifyResultWithTheRenewalInfo() async throws {
        try await ServerAPIHarness.with { harness in
            let subscription = try harness.buy(account: "status")
            _ = try harness.simulator.renewNow(originalTransactionID: subscription.originalTransactionID)
            let request = SubscriptionStatusRequest.with {
                $0.originalTransactionID = subscription.originalTransactionID
                $0.environment = .sandbox
            }
            guard case .verifyResult(let result) = try await answer(harness, .subscriptionStatusRequest(request)) else {
                Issue.record("no verify result")
                return
            }
            #expect(result.environment == .sandbox)
            #expect(result.style == .signedTransaction)
            #expect(result.bundleID == ServerAPIHarness.bundleID)
            #expect(result.transactions.count == 1, "the latest transaction only")
            #expect(result.transactions.first?.originalTransactionID == subscription.originalTransactionID)
            #expect(result.transactions.first?.transactionID != subscription.transactionID, "the renewal")
            #expect(result.pendingRenewals.map(\.originalTransactionID) == [subscription.originalTransactionID])
            #expect(result.pendingRenewals.first?.autoRenewStatus == true)
            #expect(result.latestReceipt.isEmpty)
            #expect(harness.paths.allSatisfy { $0.hasPrefix("/sandbox/") }, "asked where the subscription is")
            // Only the environment named is asked: the same id is not a production purchase.
            let before = harness.paths.count
            let wrongEnvironment = SubscriptionStatusRequest.with {
                $0.originalTransactionID = subscription.originalTransactionID
                $0.environment = .production
            }
            guard case .failure(let failure) = try await answer(harness, .subscriptionStatusRequest(wrongEnvironment)) else {
                Issue.record("answered from another environment")
                return
            }
            #expect(failure.failureCode == .receiptInvalid)
            #expect(harness.paths.dropFirst(before).allSatisfy { $0.hasPrefix("/production/") }, "no fallback to sandbox")
        }
    }

    @Test func notificationHistoryComesBackAsTheLedgerAppliesIt() async throws {
        try await ServerAPIHarness.with { harness in
            let start = harness.simulator.now
            let subscription = try harness.buy(account: "history")
            await harness.notifier.deliver([try harness.simulator.refund(transactionID: subscription.transactionID, reason: 0)])
            let query = NotificationHistoryQuery.with {
                $0.environment = .sandbox
                $0.startMs = start
                $0.endMs = harness.simulator.now
            }
            guard case .notificationHistoryPage(let page) = try await answer(harness, .notificationHistoryQuery(query)) else {
                Issue.record("no page")
                return
            }
            #expect(page.notifications.map(\.notificationType) == ["REFUND"])
            #expect(page.notifications.first?.version == .v2)
            #expect(page.notifications.first?.originalTransactionID == subscription.originalTransactionID)
            #expect(page.notifications.first?.transactions.first?.hasCancellationDateMs == true)
        }
    }

    @Test func consumptionInformationReachesTheSimulatorAsSent() async throws {
        try await ServerAPIHarness.with { harness in
            let gems = try harness.buy("com.example.gems", type: .consumable, account: "refund")
            let request = ConsumptionInfoRequest.with {
                $0.transactionID = gems.transactionID
                $0.environment = .sandbox
                $0.customerConsented = true
                $0.deliveryStatus = 0
                $0.accountTenure = 3
                $0.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            }
            guard case .consumptionInfoSent(let sent) = try await answer(harness, .consumptionInfoRequest(request)) else {
                Issue.record("not sent")
                return
            }
            #expect(sent.environment == .sandbox)
            let received = try #require(harness.simulator.consumptionInformation(gems.transactionID))
            #expect(received == ConsumptionRequest(request))
            #expect(received.customerConsented == true && received.deliveryStatus == 0 && received.accountTenure == 3)
            #expect(received.lifetimeDollarsPurchased == 0, "undeclared is sent as Apple's 0")
            #expect(harness.paths.allSatisfy { $0.hasPrefix("/sandbox/") }, "sent where the purchase is, only")
        }
    }

    @Test func aVerifierWithoutCredentialsSaysSoAndOtherBodiesAreNotItsOwn() async throws {
        let requests = ServerAPIPoolRequests(client: nil)
        let deadline = ContinuousClock.now + .seconds(1)
        for body: Envelope.OneOf_Body in [
            .subscriptionStatusRequest(.init()), .notificationHistoryQuery(.init()), .consumptionInfoRequest(.init()),
        ] {
            guard case .failure(let failure) = await requests.answer(body, deadline: deadline, nowMs: 0) else {
                Issue.record("answered without credentials")
                continue
            }
            #expect(failure.failureCode == .serverAPIUnconfigured)
        }
        #expect(await requests.answer(.verifyRequest(.init()), deadline: deadline, nowMs: 0) == nil)
    }
}
