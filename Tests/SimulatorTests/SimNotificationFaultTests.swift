import AppleFormats
import AppleJWS
import Contracts
import Foundation
import Logging
import Synchronization
import Testing

@testable import Simulator

/// Lost deliveries (the ledger's catch-up must find them in the history),
/// refund requests (CONSUMPTION_REQUEST), and the appAccountToken the app
/// sets on a purchase, as the simulator makes them.
@Suite struct SimNotificationFaultTests {
    let t0: Int64 = 1_700_000_000_000

    final class Posted: Sendable {
        let bodies = Mutex<[[UInt8]]>([])
        var count: Int { bodies.withLock { $0.count } }
    }

    func notifier(_ simulator: AppStoreSimulator, _ posted: Posted) -> SimNotifier {
        SimNotifier(
            simulator: simulator, url: "http://127.0.0.1:9/notifications", password: nil, version: 2,
            transport: { _, body in
                posted.bodies.withLock { $0.append(body) }
                return 200
            }, logger: Logger(label: "sim-test") { _ in SwiftLogNoOpLogHandler() })
    }

    func history(_ simulator: AppStoreSimulator, environment: AppleEnvironment = .sandbox) throws -> NotificationHistoryResponse {
        let reply = simulator.notificationHistory(
            NotificationHistoryRequest(startDate: 0, endDate: simulator.now), paginationToken: nil, at: environment)
        guard reply.status == 200 else { throw Unexpected() }
        return try JSONDecoder().decode(NotificationHistoryResponse.self, from: Data(reply.body))
    }

    struct Unexpected: Error {}

    @Test func aDroppedNotificationIsKeptInTheHistoryAndNeverPosted() async throws {
        let simulator = AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: nil, wallClock: { self.t0 })
        let posted = Posted()
        let notifier = notifier(simulator, posted)
        let bought = try simulator.purchase(
            PurchaseRequest(account: "a", productID: "pro.monthly", type: .autoRenewable, environment: .sandbox))
        simulator.dropsNotifications.store(true, ordering: .relaxed)
        await notifier.deliver([try simulator.refund(transactionID: bought.transactionID, reason: 0)])
        #expect(posted.count == 0)
        let lost = try history(simulator).notificationHistory ?? []
        #expect(lost.count == 1)
        #expect(lost.first?.sendAttempts?.map(\.sendAttemptResult) == ["NO_RESPONSE"])

        simulator.dropsNotifications.store(false, ordering: .relaxed)
        let other = try simulator.purchase(PurchaseRequest(account: "b", productID: "gems", type: .consumable, environment: .sandbox))
        await notifier.deliver([try simulator.refund(transactionID: other.transactionID, reason: 0)])
        #expect(posted.count == 1, "delivered again once the fault is off")
    }

    @Test func aRefundRequestIsAConsumptionRequestAboutThatTransaction() async throws {
        let simulator = AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: nil, wallClock: { self.t0 })
        let gems = try simulator.purchase(
            PurchaseRequest(account: "a", productID: "gems", type: .consumable, environment: .production))
        let request = try simulator.consumptionRequest(transactionID: gems.transactionID)
        #expect(request == SimNotification(
            type: "CONSUMPTION_REQUEST", originalTransactionID: gems.originalTransactionID, environment: .production,
            transactionID: gems.transactionID))
        #expect(throws: SimStore.Failure.unknownTransaction) { try simulator.consumptionRequest(transactionID: "nope") }
    }

    @Test func theAppAccountTokenIsSignedWithThePurchaseAndItsRenewals() async throws {
        let simulator = AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: nil, wallClock: { self.t0 })
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        var request = PurchaseRequest(account: "a", productID: "pro.monthly", type: .autoRenewable, environment: .sandbox)
        request.appAccountToken = token
        let bought = try simulator.purchase(request)
        let renewal = try #require(
            try simulator.renewNow(originalTransactionID: bought.originalTransactionID).notifications.first?.transactionID)
        let verifier = SignedDataVerifier(
            trustedRoots: try SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM]))
        for id in [bought.transactionID, renewal] {
            let payload = try await verifier.verify(try #require(simulator.signedTransaction(id)))
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
            #expect(claims["appAccountToken"] as? String == token)
        }
    }
}
