import Foundation
import Testing

/// One purchase reaches Storekeeper as an app receipt, as its StoreKit 2 JWS
/// and as its bare transaction id, through `storekeeper up --sim` (whose
/// verifiers get the simulator's App Store Server API key): credited once,
/// whichever comes first, with receipts read by verifyReceipt or, in
/// `server_api` mode, from the Server API's history.
@Suite("One purchase, three ways in", .serialized)
struct OnePurchaseThreeWaysTests {
    enum Way: String, CaseIterable { case receipt, jws, id }

    struct Purchase {
        let transactionID: String
        let receipt: String
        let jws: String
    }

    @Test(arguments: ["verify_receipt", "server_api"])
    func aReceiptAJWSAndATransactionIDGrantOnceWhicheverComesFirst(mode: String) async throws {
        try await UpStack.run(verifiers: 1, environment: ["STOREKEEPER_RECEIPT_VERIFICATION": mode]) { stack in
            let tail = try stack.startCLI("events", "tail", "--topic", "transaction.granted")
            defer { tail.signal(SIGKILL) }
            // A sandbox subscription, receipt first; a production non-consumable, transaction id first.
            let subscription = try await Self.buy(stack, account: "three-ways-a", "com.example.pro.monthly", "auto_renewable", "sandbox")
            try await Self.post(subscription, [.receipt, .jws, .id], user: "three-a", stack)
            let removeAds = try await Self.buy(stack, account: "three-ways-b", "com.example.removeads", "non_consumable", "production")
            try await Self.post(removeAds, [.id, .jws, .receipt], user: "three-b", stack)

            // Each user owns its purchase once: one credited transaction, one entitlement.
            for (user, purchase) in [("three-a", subscription), ("three-b", removeAds)] {
                let listed = try await HTTPAnswer.call("GET", stack.gateway + "/v1/users/\(user)/transactions")
                #expect((listed.json["transactions"] as? [[String: Any]])?.map { $0["transaction_id"] as? String } == [purchase.transactionID])
                let owned = try await HTTPAnswer.call("GET", stack.gateway + "/v1/users/\(user)/entitlements")
                #expect((owned.json["entitlements"] as? [Any])?.count == 1, "\(owned.json)")
            }
            // The event stream: a marker grant after everything above, then exactly one grant per purchase before it.
            let marker = try await Self.buy(stack, account: "three-ways-marker", "com.example.coins100", "consumable", "production")
            let markerAnswer = try await HTTPAnswer.call(
                "POST", stack.gateway + "/v1/transactions", json: ["user_id": "three-marker", "signed_transaction": marker.jws])
            #expect(markerAnswer.status == 200)
            // In seq order: a second grant of either purchase would come before the marker's.
            let events = try await StackUpTests.waitForEvents(tail, count: 3)
            #expect(events.map(\.transactionID).contains(marker.transactionID), "\(tail.captured)")
            let before = events.prefix { $0.transactionID != marker.transactionID }
            #expect(before.map(\.transactionID) == [subscription.transactionID, removeAds.transactionID], "\(tail.captured)")
            #expect(before.map(\.userID) == ["three-a", "three-b"])
            // The receipts went the mode's way (the verifier's log line of each).
            let line = mode == "server_api" ? "receipt read from the App Store Server API" : "receipt verified"
            #expect(stack.up.captured.split(separator: "\n").filter { $0.contains(line) }.count == 2, "\(mode)")
        }
    }

    static func buy(
        _ stack: UpStack, account: String, _ product: String, _ type: String, _ environment: String
    ) async throws -> Purchase {
        let bought = try await HTTPAnswer.call(
            "POST", stack.simulator + "/admin/purchases",
            json: ["account": account, "product_id": product, "type": type, "environment": environment])
        return Purchase(
            transactionID: try #require(bought.json["transaction_id"] as? String),
            receipt: try #require(bought.json["receipt_data"] as? String),
            jws: try #require(bought.json["signed_transaction"] as? String))
    }

    /// Posts `purchase` each way in turn: the first answer grants it, every later one finds it granted.
    static func post(_ purchase: Purchase, _ ways: [Way], user: String, _ stack: UpStack) async throws {
        for (index, way) in ways.enumerated() {
            let answer: HTTPAnswer
            switch way {
            case .receipt:
                answer = try await HTTPAnswer.call(
                    "POST", stack.gateway + "/v1/receipts", json: ["user_id": user, "receipt_data": purchase.receipt])
            case .jws:
                answer = try await HTTPAnswer.call(
                    "POST", stack.gateway + "/v1/transactions", json: ["user_id": user, "signed_transaction": purchase.jws])
            case .id:
                answer = try await HTTPAnswer.call(
                    "POST", stack.gateway + "/v1/transactions", json: ["user_id": user, "transaction_id": purchase.transactionID])
            }
            let what = "\(way) (\(index + 1) of \(ways.map(\.rawValue)))"
            #expect(answer.status == 200, "\(what): \(answer.json)")
            let granted = (answer.json["granted"] as? [[String: Any]])?.map { $0["transaction_id"] as? String }
            #expect(granted == (index == 0 ? [purchase.transactionID] : []), "\(what): \(answer.json)")
            let already = answer.json["already_granted"] as? [String] ?? []
            #expect(already == (index == 0 ? [] : [purchase.transactionID]), "\(what): \(answer.json)")
        }
    }
}
