import Contracts
import Foundation
import Testing

@testable import Simulator

@Suite struct SimStoreTests {
    let t0: Int64 = 1_700_000_000_000
    let responder = SimVerifyResponder(bundleID: "com.example.storekeeper", sharedSecret: "secret-0123")

    func verify(
        _ receipt: String, at environment: AppleEnvironment, password: String? = "secret-0123",
        store: inout SimStore, now: Int64
    ) throws -> [String: Any] {
        var request: [String: Any] = ["receipt-data": receipt]
        if let password { request["password"] = password }
        let body = try JSONSerialization.data(withJSONObject: request)
        return responder.answer(Array(body), at: environment, store: &store, now: now)
    }

    @Test func wrongEnvironmentGets21007Or21008() throws {
        var store = SimStore()
        let sandbox = try store.purchase(
            account: "a", productID: "gems", type: .consumable, period: .month, quantity: 3, environment: .sandbox, now: t0)
        #expect(try verify(sandbox.receiptData, at: .production, store: &store, now: t0)["status"] as? Int == 21007)
        #expect(try verify(sandbox.receiptData, at: .sandbox, password: nil, store: &store, now: t0)["status"] as? Int == 0)
        let production = try store.purchase(
            account: "a", productID: "gems", type: .consumable, period: .month, quantity: 1, environment: .production, now: t0)
        #expect(try verify(production.receiptData, at: .sandbox, store: &store, now: t0)["status"] as? Int == 21008)
    }

    @Test func unknownOrDamagedReceiptsGet21002() throws {
        var store = SimStore()
        let purchase = try store.purchase(
            account: "a", productID: "pro", type: .nonConsumable, period: .month, quantity: 1, environment: .sandbox, now: t0)
        #expect(try verify("bm90IG1pbnRlZA==", at: .sandbox, store: &store, now: t0)["status"] as? Int == 21002)
        let damaged = purchase.receiptData.replacingOccurrences(of: "+", with: " ")
        if damaged != purchase.receiptData {
            #expect(try verify(damaged, at: .sandbox, store: &store, now: t0)["status"] as? Int == 21002)
        }
        let malformed = responder.answer(Array("not json".utf8), at: .sandbox, store: &store, now: t0)
        #expect(malformed["status"] as? Int == 21000)
    }

    @Test func subscriptionsNeedTheSharedSecret() throws {
        var store = SimStore()
        let purchase = try store.purchase(
            account: "a", productID: "pro.monthly", type: .autoRenewable, period: .month, quantity: 1,
            environment: .sandbox, now: t0)
        #expect(try verify(purchase.receiptData, at: .sandbox, password: nil, store: &store, now: t0)["status"] as? Int == 21004)
        #expect(try verify(purchase.receiptData, at: .sandbox, password: "wrong", store: &store, now: t0)["status"] as? Int == 21004)
        let ok = try verify(purchase.receiptData, at: .sandbox, store: &store, now: t0)
        #expect(ok["status"] as? Int == 0)
        #expect(ok["environment"] as? String == "Sandbox")
        let latest = try #require(ok["latest_receipt_info"] as? [[String: Any]])
        #expect(latest.first?["expires_date_ms"] as? String == String(t0 + 5 * 60_000))
        #expect(ok["latest_receipt"] as? String != nil)
    }

    @Test func sandboxRenewsEveryFiveMinutesAndStopsAfterFiveRenewals() throws {
        var store = SimStore()
        let purchase = try store.purchase(
            account: "a", productID: "pro.monthly", type: .autoRenewable, period: .month, quantity: 1,
            environment: .sandbox, now: t0)
        let notifications = store.renewDue(now: t0 + 3_600_000)
        #expect(notifications.filter { $0.type == "DID_RENEW" }.count == 5)
        #expect(notifications.last?.type == "DID_CHANGE_RENEWAL_STATUS")
        let answer = try verify(purchase.receiptData, at: .sandbox, store: &store, now: t0 + 3_600_000)
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        #expect(latest.count == 6)
        let expiries = latest.compactMap { ($0["expires_date_ms"] as? String).flatMap(Int64.init) }
        #expect(expiries.max() == t0 + 6 * 5 * 60_000)
        #expect(Set(latest.compactMap { $0["original_transaction_id"] as? String }) == [purchase.originalTransactionID])
        let renewal = try #require((answer["pending_renewal_info"] as? [[String: Any]])?.first)
        #expect(renewal["auto_renew_status"] as? String == "0")
    }

    @Test func refundsSetCancellationDateAndStopRenewal() throws {
        var store = SimStore()
        let purchase = try store.purchase(
            account: "a", productID: "pro.monthly", type: .autoRenewable, period: .month, quantity: 1,
            environment: .production, now: t0)
        let notification = try store.refund(transactionID: purchase.transactionID, reason: 1, now: t0 + 1_000)
        #expect(
            notification
                == SimNotification(
                    type: "REFUND", originalTransactionID: purchase.originalTransactionID, environment: .production,
                    transactionID: purchase.transactionID))
        let answer = try verify(purchase.receiptData, at: .production, store: &store, now: t0 + 2_000)
        let latest = try #require((answer["latest_receipt_info"] as? [[String: Any]])?.first)
        #expect(latest["cancellation_date_ms"] as? String == String(t0 + 1_000))
        #expect(latest["cancellation_reason"] as? String == "1")
        #expect(store.renewDue(now: t0 + 400 * 86_400_000).isEmpty)
        #expect(throws: SimStore.Failure.unknownTransaction) { try store.refund(transactionID: "nope", reason: 0, now: t0) }
    }

    @Test func autoRenewTogglesNotifyOnlyOnChange() throws {
        var store = SimStore()
        let purchase = try store.purchase(
            account: "a", productID: "pro.yearly", type: .autoRenewable, period: .year, quantity: 1,
            environment: .sandbox, now: t0)
        #expect(try store.setAutoRenew(originalTransactionID: purchase.originalTransactionID, enabled: false)?.type == "DID_CHANGE_RENEWAL_STATUS")
        #expect(try store.setAutoRenew(originalTransactionID: purchase.originalTransactionID, enabled: false) == nil)
        #expect(store.renewDue(now: t0 + 2 * 3_600_000).isEmpty)
    }

    @Test func aReceiptHoldsEveryPurchaseOfItsAccountAtMintTime() throws {
        var store = SimStore()
        _ = try store.purchase(account: "a", productID: "gems", type: .consumable, period: .month, quantity: 1, environment: .sandbox, now: t0)
        let second = try store.purchase(account: "a", productID: "pro", type: .nonConsumable, period: .month, quantity: 1, environment: .sandbox, now: t0 + 1)
        _ = try store.purchase(account: "b", productID: "gems", type: .consumable, period: .month, quantity: 1, environment: .sandbox, now: t0 + 2)
        let answer = try verify(second.receiptData, at: .sandbox, password: nil, store: &store, now: t0 + 3)
        let inApp = try #require((answer["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
        #expect(inApp.count == 2)
        #expect(throws: SimStore.Failure.alreadyOwned) {
            try store.purchase(account: "a", productID: "pro", type: .nonConsumable, period: .month, quantity: 1, environment: .sandbox, now: t0 + 4)
        }
    }

    @Test func faultPlanPicksFaultsByRate() throws {
        var plan = FaultPlan()
        plan.rates = [.hang: 0.1, .http503: 0.2, .status21005: 0.3, .wrongBundle: 0.1]
        #expect(plan.fault(unit: 0.05) == .hang)
        #expect(plan.fault(unit: 0.25) == .http503)
        #expect(plan.fault(unit: 0.55) == .status21005)
        #expect(plan.fault(unit: 0.65) == .wrongBundle)
        #expect(plan.fault(unit: 0.75) == nil)
        plan.rates[.http503] = 0.9
        #expect(throws: FaultPlanError.self) { try plan.validated() }
    }
}

@Suite struct FaultPlanDecodingTests {
    @Test func omittedFieldsMeanNoFault() throws {
        let plan = try JSONDecoder().decode(FaultPlan.self, from: Data(#"{"rate_503": 0.5, "latency_min_ms": 3000}"#.utf8))
        #expect(plan.rates == [.http503: 0.5])
        #expect(plan.latencyMinMs == 3_000)
        #expect(plan.latencyMaxMs == 3_000)
    }
}
