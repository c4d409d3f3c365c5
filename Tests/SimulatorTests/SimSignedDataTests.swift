import AppleJWS
import Contracts
import Foundation
import Testing

@testable import Simulator

/// What the simulator signs verifies under its own root (and only there),
/// and says what its store holds.
@Suite struct SimSignedDataTests {
    let t0: Int64 = 1_700_000_000_000
    let trusting = SignedDataVerifier(
        trustedRoots: try! SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM]))

    func claims(_ jws: String) async throws -> [String: Any] {
        let payload = try await trusting.verify(jws)
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    @Test func aPurchasesSignedTransactionStatesItsFields() async throws {
        let simulator = AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: nil, wallClock: { self.t0 })
        let bought = try simulator.purchase(
            PurchaseRequest(account: "a", productID: "pro.monthly", type: .autoRenewable, environment: .sandbox))
        let jws = try #require(simulator.signedTransaction(bought.transactionID))
        let transaction = try await claims(jws)
        #expect(transaction["transactionId"] as? String == bought.transactionID)
        #expect(transaction["bundleId"] as? String == "com.example.storekeeper")
        #expect(transaction["environment"] as? String == "Sandbox")
        #expect((transaction["expiresDate"] as? NSNumber)?.int64Value == bought.expiresMs)
        #expect(simulator.signedTransaction("unknown") == nil)
        // Apple's root alone does not trust it.
        let apple = SignedDataVerifier(trustedRoots: try SignedDataVerifier.appleRoots())
        await #expect(throws: SignedDataError.chainUntrusted) { try await apple.verify(jws) }
    }

    @Test func aRefundNotificationNestsTheRevokedTransactionAndTheRenewalInfo() async throws {
        let simulator = AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: nil, wallClock: { self.t0 })
        let bought = try simulator.purchase(
            PurchaseRequest(account: "a", productID: "pro.monthly", type: .autoRenewable, environment: .production))
        let refund = try simulator.refund(transactionID: bought.transactionID, reason: 1)
        let record = try #require(simulator.record(refund))
        let body = try #require(simulator.notificationBodyV2(record))
        let signedPayload = try #require(
            (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String)
        let notification = try await claims(signedPayload)
        #expect(notification["notificationType"] as? String == "REFUND")
        #expect((notification["notificationUUID"] as? String)?.isEmpty == false)
        let data = try #require(notification["data"] as? [String: Any])
        #expect(data["environment"] as? String == "Production")
        let transaction = try await claims(try #require(data["signedTransactionInfo"] as? String))
        #expect(transaction["transactionId"] as? String == bought.transactionID)
        #expect((transaction["revocationDate"] as? NSNumber)?.int64Value == t0)
        #expect((transaction["revocationReason"] as? NSNumber)?.intValue == 1)
        let renewal = try await claims(try #require(data["signedRenewalInfo"] as? String))
        #expect((renewal["autoRenewStatus"] as? NSNumber)?.intValue == 0)
        // Each delivery is its own notification.
        let recordedAgain = try #require(simulator.record(refund))
        let again = try #require(simulator.notificationBodyV2(recordedAgain))
        #expect(again != body)
    }
}
