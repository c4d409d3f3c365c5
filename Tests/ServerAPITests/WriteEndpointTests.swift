import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// The two calls that change something: a renewal-date extension and consumption information.
@Suite("Server API against the simulator: extensions and consumption")
struct WriteEndpointTests {
    @Test func anExtensionMovesTheRenewalDateOnceForOneRequestIdentifier() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy()
            let client = try harness.client()
            let extended = try await client.extendRenewalDate(
                bought.originalTransactionID, byDays: 7, reason: 1, requestIdentifier: "extend-1")
            let week: Int64 = 7 * 86_400_000
            #expect(extended.environment == .sandbox)
            #expect(extended.answer.success == true)
            #expect(extended.answer.effectiveDate == bought.expiresMs.map { $0 + week })
            let again = try await client.extendRenewalDate(
                bought.originalTransactionID, byDays: 7, reason: 1, requestIdentifier: "extend-1")
            #expect(again.answer == extended.answer, "the same request is not a second extension")
            let transaction = try await client.transactionInfo(bought.transactionID).transactions.first
            #expect(transaction?.expiresDateMs == extended.answer.effectiveDate)
            // The PUT went to production first, which does not know the subscription (4040005).
            #expect(harness.sent.all.first.map { $0.method == .put && $0.url.contains("/production/") } == true)
        }
    }

    @Test func anExpiredSubscriptionCannotBeExtended() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy()
            _ = try harness.simulator.setAutoRenew(originalTransactionID: bought.originalTransactionID, enabled: false)
            _ = harness.simulator.advanceClock(byMilliseconds: 10 * 60_000)
            await #expect(throws: ServerAPIError.rejected(status: 403, code: .subscriptionExtensionIneligible, message: "Subscription extension ineligible.")) {
                try await harness.client().extendRenewalDate(
                    bought.originalTransactionID, byDays: 3, reason: 3, requestIdentifier: "late")
            }
        }
    }

    @Test func consumptionInformationReachesTheSimulatorAndNeedsConsent() async throws {
        try await ServerAPIHarness.with { harness in
            let gems = try harness.buy("com.example.gems", type: .consumable, environment: .production)
            let information = ConsumptionRequest(
                customerConsented: true, consumptionStatus: 2, platform: 1, sampleContentProvided: false, deliveryStatus: 0,
                accountTenure: 3, playTime: 4, lifetimeDollarsRefunded: 0, lifetimeDollarsPurchased: 2, userStatus: 1,
                refundPreference: 2)
            let environment = try await harness.client().sendConsumption(gems.transactionID, information)
            #expect(environment == .production)
            #expect(harness.simulator.consumptionInformation(gems.transactionID) == information)

            var withoutConsent = information
            withoutConsent.customerConsented = false
            await #expect(throws: ServerAPIError.rejected(status: 400, code: .invalidCustomerConsented, message: "Invalid customer consented value.")) {
                try await harness.client().sendConsumption(gems.transactionID, withoutConsent)
            }
        }
    }
}
