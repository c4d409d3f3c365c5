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

@Suite struct SimDateTests {
    @Test func datesAreWrittenAsApplesGMTStrings() {
        #expect(SimVerifyResponder.gmt(1_700_000_000_000) == "2023-11-14 22:13:20 Etc/GMT")
        #expect(SimVerifyResponder.gmt(946_684_799_000) == "1999-12-31 23:59:59 Etc/GMT")
        #expect(SimVerifyResponder.gmt(0) == "1970-01-01 00:00:00 Etc/GMT")
    }
}
