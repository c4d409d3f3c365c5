import Contracts
import Foundation
import LedgerClient
import Synchronization
import Testing
import ZeroMQ

/// The ledger re-verifies a subscription that lapsed while auto-renew was on
/// (its renewal notification never came) through its own verifier pool: real
/// ledger, verifier and simulator processes.
@Suite("Ledger refresh", .serialized)
struct LedgerRefreshTests {
    @Test func aLapsedAutoRenewingSubscriptionIsRefreshedThroughTheVerifierPool() async throws {
        let simulator = try await SimulatorProcess()
        let pool = try await PoolHarness(simulator: simulator)
        let ledger = try await LedgerProcess(extraEnvironment: [
            "STOREKEEPER_REFRESH_PER_MINUTE": "600", "STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS": "100",
        ])
        let verifier = try pool.startVerifier([
            "STOREKEEPER_REFRESH_ENDPOINT": ledger.environment["STOREKEEPER_REFRESH_ENDPOINT"] ?? ""
        ])
        let context = ZMQContext()
        let client = ledger.client(context)
        let clientRunner = Task { try await client.run() }
        let received = LedgerEventStreamTests.Received()
        let subscriber = Task { try await ledger.subscriber(context).run(after: 0) { received.append($0) } }
        do {
            let (receipt, transactionID) = try await simulator.purchase(
                product: "com.example.pro.monthly", type: "auto_renewable", environment: "sandbox")
            // What the ledger last heard: a period that ended a minute ago with
            // auto-renew on, and the receipt to ask Apple with.
            let now = Int64(Date().timeIntervalSince1970 * 1_000)
            let lapsed = RecordRequest.with {
                $0.userID = "u-refresh"
                $0.result = VerifyResult.with {
                    $0.environment = .sandbox
                    $0.style = .ios7
                    $0.bundleID = "com.example.storekeeper"
                    $0.latestReceipt = receipt
                    $0.transactions = [
                        Transaction.with {
                            $0.transactionID = "\(transactionID)-previous"
                            $0.originalTransactionID = transactionID
                            $0.productID = "com.example.pro.monthly"
                            $0.quantity = 1
                            $0.purchaseDateMs = now - 6 * 60_000
                            $0.expiresDateMs = now - 60_000
                        }
                    ]
                    $0.pendingRenewals = [
                        PendingRenewal.with {
                            $0.originalTransactionID = transactionID
                            $0.autoRenewStatus = true
                        }
                    ]
                }
            }
            let recorded = try await client.record(lapsed, requestID: "lapsed")
            #expect(recorded.entitlements.first?.state == .expired)

            // The ledger notices, asks Apple (the simulator) through the verifier, and renews.
            for _ in 0..<300 where !received.all.contains(where: { $0.topic == "subscription.renewed" }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            let renewed = try #require(received.all.first { $0.topic == "subscription.renewed" })
            #expect(renewed.userID == "u-refresh")
            #expect(renewed.subscriptionRenewed.originalTransactionID == transactionID)
            #expect(renewed.subscriptionRenewed.expiresDateMs > now)
            #expect(renewed.requestID.hasPrefix("refresh-"))
            let granted = received.all.filter { $0.topic == "transaction.granted" }
            #expect(granted.map(\.transactionGranted.grant.transactionID).contains(transactionID))
            let entitlements = try await client.entitlements(of: "u-refresh", requestID: "read")
            #expect(entitlements.entitlements.first?.state == .active)
        } catch {
            Issue.record("\(error)")
        }
        subscriber.cancel()
        _ = await subscriber.result
        clientRunner.cancel()
        _ = await clientRunner.result
        #expect(await verifier.stop() == 0)
        #expect(await ledger.stop() == 0)
        await pool.stop()
        await simulator.stop()
    }
}
