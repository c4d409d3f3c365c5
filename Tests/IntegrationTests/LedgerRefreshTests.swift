import Contracts
import Foundation
import Testing

/// The ledger re-verifies a subscription that lapsed while auto-renew was on
/// (its renewal notification never came) through its own verifier pool, real
/// processes all: with the App Store Server API when the verifiers have its
/// key (Get All Subscription Statuses; a StoreKit 2 purchase has no receipt),
/// else with its receipt (verifyReceipt).
@Suite("Ledger refresh", .serialized)
struct LedgerRefreshTests {
    static let ledgerEnvironment = [
        "STOREKEEPER_REFRESH_PER_MINUTE": "600", "STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS": "100",
        "STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS": "0",
    ]

    /// Records `lapsed`, waits for the subscription's renewal and checks what the stream and the user's entitlements say.
    func expectRefreshed(
        _ stack: ServerAPIStack, _ lapsed: RecordRequest, originalTransactionID: String, now: Int64
    ) async throws -> Entitlement? {
        let recorded = try await stack.client.record(lapsed, requestID: "lapsed")
        #expect(recorded.entitlements.first?.state == .expired)
        // The ledger notices, asks Apple (the simulator) through the verifier, and renews.
        let renewed = try await stack.events.first("renewing \(originalTransactionID)") {
            $0.topic == "subscription.renewed" && $0.subscriptionRenewed.originalTransactionID == originalTransactionID
        }
        #expect(renewed.requestID.hasPrefix("refresh-"))
        #expect(renewed.userID == lapsed.userID)
        #expect(renewed.subscriptionRenewed.expiresDateMs > now)
        #expect(
            stack.events.all.contains {
                $0.topic == "transaction.granted" && $0.transactionGranted.grant.transactionID == originalTransactionID
            })
        let entitlements = try await stack.client.entitlements(of: lapsed.userID, requestID: "read")
        #expect(entitlements.entitlements.first?.state == .active)
        return entitlements.entitlements.first
    }

    @Test func withoutServerAPICredentialsALapsedSubscriptionIsRefreshedByItsReceipt() async throws {
        try await ServerAPIStack.run(serverAPI: false, ledgerEnvironment: Self.ledgerEnvironment) { stack in
            let (receipt, transactionID) = try await stack.simulator.purchase(
                product: "com.example.pro.monthly", type: "auto_renewable", environment: "sandbox")
            let now = Int64(Date().timeIntervalSince1970 * 1_000)
            let lapsed = lapsedSubscription(user: "u-refresh", originalTransactionID: transactionID, now: now, receipt: receipt)
            _ = try await expectRefreshed(stack, lapsed, originalTransactionID: transactionID, now: now)
            // Logged after the commit whose event the wait above saw: bounded, for a loaded machine.
            #expect(await stack.ledger.process.waitForOutput(containing: "refresh.path=verify_receipt", timeout: .seconds(30)))
        }
    }

    @Test func aStoreKit2SubscriptionWithNoReceiptIsRefreshedThroughTheServerAPI() async throws {
        try await ServerAPIStack.run(ledgerEnvironment: Self.ledgerEnvironment) { stack in
            let bought = try await stack.buy("com.example.pro.monthly", type: "auto_renewable", account: "sk2-refresh")
            let original = try #require(bought["original_transaction_id"] as? String)
            let now = Int64(Date().timeIntervalSince1970 * 1_000)
            let lapsed = lapsedSubscription(user: "u-sk2", originalTransactionID: original, now: now, receipt: nil)
            let entitlement = try await expectRefreshed(stack, lapsed, originalTransactionID: original, now: now)
            #expect(entitlement?.autoRenew == true, "the renewal info came with the status")
            // Logged after the commit whose event the wait above saw: bounded, for a loaded machine.
            #expect(await stack.ledger.process.waitForOutput(containing: "refresh.path=server_api", timeout: .seconds(30)))
        }
    }
}
