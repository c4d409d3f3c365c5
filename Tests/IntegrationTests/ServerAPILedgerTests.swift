import Contracts
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ledger's other uses of the App Store Server API, across real
/// processes: a StoreKit 2 subscription (no receipt) refreshed through Get
/// All Subscription Statuses, and a refund request answered with Send
/// Consumption Information built from the ledger's records, as the
/// simulator receives it.
@Suite("The ledger and the App Store Server API", .serialized)
struct ServerAPILedgerTests {
    @Test func aStoreKit2SubscriptionWithNoReceiptIsRefreshedThroughTheServerAPI() async throws {
        try await ServerAPIStack.run(ledgerEnvironment: [
            "STOREKEEPER_REFRESH_PER_MINUTE": "600", "STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS": "100",
            "STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS": "0",
        ]) { stack in
            let bought = try await stack.buy("com.example.pro.monthly", type: "auto_renewable", account: "sk2-refresh")
            let original = try #require(bought["original_transaction_id"] as? String)
            // What the ledger last heard from StoreKit 2: a period that ended a minute ago, no
            // receipt to ask verifyReceipt with, no renewal info.
            let now = Int64(Date().timeIntervalSince1970 * 1_000)
            let lapsed = RecordRequest.with {
                $0.userID = "u-sk2"
                $0.result = VerifyResult.with {
                    $0.environment = .sandbox
                    $0.style = .signedTransaction
                    $0.bundleID = "com.example.storekeeper"
                    $0.transactions = [
                        Transaction.with {
                            $0.transactionID = "\(original)-previous"
                            $0.originalTransactionID = original
                            $0.productID = "com.example.pro.monthly"
                            $0.quantity = 1
                            $0.purchaseDateMs = now - 6 * 60_000
                            $0.expiresDateMs = now - 60_000
                            $0.kind = .autoRenewable
                        }
                    ]
                }
            }
            _ = try await stack.client.record(lapsed, requestID: "lapsed")

            let renewed = try await stack.events.first("renewing \(original)") {
                $0.topic == "subscription.renewed" && $0.subscriptionRenewed.originalTransactionID == original
            }
            #expect(renewed.requestID.hasPrefix("refresh-"))
            #expect(renewed.userID == "u-sk2")
            #expect(renewed.subscriptionRenewed.expiresDateMs > now)
            #expect(
                stack.events.all.contains { $0.topic == "transaction.granted" && $0.transactionGranted.grant.transactionID == original })
            #expect(stack.ledger.process.captured.contains("refresh.path=server_api"), "refreshed through the Server API")
            let entitlements = try await stack.client.entitlements(of: "u-sk2", requestID: "read")
            #expect(entitlements.entitlements.first?.state == .active)
            #expect(entitlements.entitlements.first?.autoRenew == true, "the renewal info came with the status")
        }
    }

    @Test func aRefundRequestIsAnsweredWithWhatTheLedgerKnows() async throws {
        try await ServerAPIStack.run(ledgerEnvironment: [
            "STOREKEEPER_SEND_CONSUMPTION_INFO": "true", "STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS": "100",
            "STOREKEEPER_REFRESH_PER_MINUTE": "0", "STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS": "3600",
        ]) { stack in
            let token = UUID().uuidString.lowercased()
            let credited = try await stack.buy("com.example.gems", type: "consumable", account: "refunds", appAccountToken: token)
            let creditedID = try #require(credited["transaction_id"] as? String)
            #expect(try await stack.record(credited, for: "u-refunds").status == 200)
            let neverCredited = try await stack.buy("com.example.gems", type: "consumable", account: "refunds")
            let neverCreditedID = try #require(neverCredited["transaction_id"] as? String)

            for id in [creditedID, neverCreditedID] {
                try await stack.simulator.admin("/admin/consumption-requests", ["transaction_id": id])
            }
            let delivered = try await consumptionInformation(stack, creditedID)
            #expect(delivered["customerConsented"] as? Bool == true)
            #expect(delivered["deliveryStatus"] as? Int == 0, "credited: delivered")
            #expect(delivered["accountTenure"] as? Int == 1, "bound minutes ago: 0 to 3 days")
            #expect(delivered["appAccountToken"] as? String == token)
            #expect(delivered["sampleContentProvided"] as? Bool == false)
            for undeclared in ["consumptionStatus", "platform", "playTime", "lifetimeDollarsRefunded", "lifetimeDollarsPurchased", "userStatus"] {
                #expect(delivered[undeclared] as? Int == 0, "\(undeclared)")
            }
            let undelivered = try await consumptionInformation(stack, neverCreditedID)
            #expect(undelivered["deliveryStatus"] as? Int == 5, "never credited: not delivered")
            #expect(undelivered["accountTenure"] as? Int == 0, "nobody holds it: undeclared")
            #expect(undelivered["appAccountToken"] as? String == "")
        }
    }

    /// What the simulator received about `transactionID`, waited for (bounded): the ledger sends it after the notification.
    func consumptionInformation(_ stack: ServerAPIStack, _ transactionID: String) async throws -> [String: Any] {
        let url = URL(string: stack.simulator.base + "/admin/consumption/\(transactionID)")!
        for _ in 0..<600 {
            let (data, response) = try await URLSession.shared.data(from: url)
            if (response as? HTTPURLResponse)?.statusCode == 200 {
                return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NothingReceived(transactionID: transactionID)
    }

    struct NothingReceived: Error { let transactionID: String }
}
