import Contracts
import Testing

@testable import Simulator

@Suite struct SimRenewTests {
    @Test func renewNowMovesTheClockToTheEndOfThePeriodAndRenewsOnce() throws {
        let t0: Int64 = 1_700_000_000_000
        let simulator = AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: nil, wallClock: { t0 })
        let bought = try simulator.purchase(
            PurchaseRequest(account: "a", productID: "pro.monthly", type: .autoRenewable, environment: .sandbox))
        let first = try simulator.renewNow(originalTransactionID: bought.originalTransactionID)
        #expect(first.notifications.map(\.type) == ["DID_RENEW"])
        #expect(first.expiresMs == t0 + 2 * 5 * 60_000)
        #expect(simulator.now == t0 + 5 * 60_000)
        let second = try simulator.renewNow(originalTransactionID: bought.originalTransactionID)
        #expect(second.expiresMs == t0 + 3 * 5 * 60_000)
        #expect(throws: SimStore.Failure.unknownSubscription) { try simulator.renewNow(originalTransactionID: "nope") }
    }
}
