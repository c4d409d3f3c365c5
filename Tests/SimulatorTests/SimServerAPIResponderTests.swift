import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator

/// The simulator's Server API answers over its store, before anything is signed.
@Suite struct SimServerAPIResponderTests {
    let t0: Int64 = 1_700_000_000_000
    let responder = SimServerAPIResponder(bundleID: "com.example.storekeeper", appAppleID: 99, pageSize: 2)

    /// The answer with each JWS replaced by the claims it would sign.
    func reply(_ query: SimServerAPIQuery, _ environment: AppleEnvironment, _ store: SimStore) -> SimServerAPIReply {
        let unsigned = responder.answer(query, at: environment, store: store, now: t0)
        return unsigned.assemble(unsigned.claims.map { String(decoding: $0, as: UTF8.self) })
    }

    func decode<T: Decodable>(_ type: T.Type, _ reply: SimServerAPIReply) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(reply.body))
    }

    @Test func aTransactionIsKnownOnlyInItsEnvironment() throws {
        var store = SimStore()
        let bought = try store.purchase(
            account: "a", productID: "gems", type: .consumable, period: .month, quantity: 1, environment: .sandbox, now: t0)
        let missing = reply(.transactionInfo(bought.transactionID), .production, store)
        #expect(missing.status == 404)
        #expect(try decode(ServerAPIErrorBody.self, missing).errorCode == 4_040_010)
        let found = reply(.transactionInfo(bought.transactionID), .sandbox, store)
        let claims = try #require(try decode(TransactionInfoResponse.self, found).signedTransactionInfo)
        #expect(claims.contains(#""transactionId":"\#(bought.transactionID)""#))
    }

    @Test func historyPagesFollowTheRevisionsOfChanges() throws {
        var store = SimStore()
        var ids: [String] = []
        for product in ["a", "b", "c"] {
            ids.append(
                try store.purchase(
                    account: "x", productID: product, type: .nonConsumable, period: .month, quantity: 1,
                    environment: .production, now: t0
                ).transactionID)
        }
        let first = try decode(HistoryResponse.self, reply(.transactionHistory(ids[0], revision: nil), .production, store))
        #expect(first.signedTransactions?.count == 2)
        #expect(first.hasMore == true)
        #expect(first.appAppleId == 99)
        #expect(first.environment == "Production")
        let second = try decode(HistoryResponse.self, reply(.transactionHistory(ids[0], revision: first.revision), .production, store))
        #expect(second.signedTransactions?.count == 1)
        #expect(second.hasMore == false)
        // A refund changes the first purchase: it comes again after the last revision.
        _ = try store.refund(transactionID: ids[0], reason: 0, now: t0)
        let later = try decode(HistoryResponse.self, reply(.transactionHistory(ids[0], revision: second.revision), .production, store))
        #expect(later.signedTransactions?.count == 1)
        #expect(later.signedTransactions?.first?.contains(#""revocationDate""#) == true)
        #expect(reply(.transactionHistory(ids[0], revision: "not-a-revision"), .production, store).status == 400)
    }

    @Test func sandboxAnswersCarryNoAppleID() throws {
        var store = SimStore()
        let bought = try store.purchase(
            account: "x", productID: "pro", type: .autoRenewable, period: .month, quantity: 1, environment: .sandbox, now: t0)
        let statuses = try decode(StatusResponse.self, reply(.subscriptionStatuses(bought.transactionID), .sandbox, store))
        #expect(statuses.appAppleId == nil)
        #expect(statuses.data?.first?.lastTransactions?.first?.status == 1)
        #expect(statuses.data?.first?.lastTransactions?.first?.signedRenewalInfo?.contains(#""autoRenewStatus":1"#) == true)
    }
}
