import Foundation
import Testing

/// Receipts recorded on the way (`LedgerHandoff`) through the real
/// processes: with verifiers naming the gateway's ledger, they hand each
/// receipt without claims to it, the answers are those the gateway's own
/// record gives (credited once, a replay grants nothing, sandbox after
/// 21007), and a receipt with a claim still goes through the gateway. With
/// verifiers naming another ledger, the gateway records everything itself.
@Suite("Receipts recorded on the way through the real stack", .serialized)
struct LedgerHandoffStackTests {
    static let counter = "storekeeper_verifier_ledger_handoffs_total"

    /// Records a consumable and a sandbox subscription twice each for `user`,
    /// and checks every answer: credited once, replays granting nothing.
    func recordTwice(_ stack: StackHarness, user: String) async throws {
        let gems = try await stack.simulator.purchase(
            product: "com.example.gems", type: "consumable", environment: "production", account: user)
        let monthly = try await stack.simulator.purchase(
            product: "com.example.pro.monthly", type: "auto_renewable", environment: "sandbox", account: user)
        for (receipt, transactionID, environment) in [
            (gems.receipt, gems.transactionID, "Production"), (monthly.receipt, monthly.transactionID, "Sandbox"),
        ] {
            let body: [String: Any] = ["user_id": user, "receipt_data": receipt]
            let first = try await stack.gateway.call("POST", "/v1/receipts", json: body)
            #expect(first.status == 200)
            #expect(first.json["user_id"] as? String == user)
            #expect(first.json["environment"] as? String == environment)
            #expect((first.json["granted"] as? [[String: Any]])?.map { $0["transaction_id"] as? String } == [transactionID])
            let again = try await stack.gateway.call("POST", "/v1/receipts", json: body)
            #expect(again.status == 200)
            #expect((again.json["granted"] as? [Any])?.isEmpty == true, "a replay grants nothing")
            #expect(again.json["already_granted"] as? [String] == [transactionID])
        }
        let read = try await stack.gateway.call("GET", "/v1/users/\(user)/entitlements")
        #expect((read.json["entitlements"] as? [[String: Any]])?.first?["state"] as? String == "active")
    }

    @Test func verifiersOnTheGatewaysLedgerHandReceiptsToIt() async throws {
        try await StackHarness.run { stack in
            try await recordTwice(stack, user: "handed-1")
            // Every receipt was asked for. Each went to the ledger unless it was answered before
            // its verifier's first probe was (libzmq connects in the background): the pool takes
            // turns over the two verifiers, so at least the replays, sent after the first answers,
            // found their ledger vouched for.
            let handed = try await stack.verifierCounter(Self.counter, labels: "outcome=\"handed_over\"")
            let answered = try await stack.verifierCounter(Self.counter, labels: "outcome=\"answered\"")
            #expect(handed + answered == 4)
            #expect(handed >= 2)

            // A claim to check: the gateway sees the result first, and records it itself.
            let (receipt, transactionID) = try await stack.simulator.purchase(
                product: "com.example.gems", type: "consumable", environment: "production", account: "claimer")
            let claimed = try await stack.gateway.call(
                "POST", "/v1/receipts",
                json: ["user_id": "claimer", "receipt_data": receipt, "product_id": "com.example.gems"])
            #expect(claimed.status == 200)
            #expect((claimed.json["granted"] as? [[String: Any]])?.first?["transaction_id"] as? String == transactionID)
            #expect(try await stack.verifierCounter(Self.counter, labels: "outcome=\"handed_over\"") == handed)
        }
    }

    @Test func verifiersOnAnotherLedgerLeaveTheRecordToTheGateway() async throws {
        try await StackHarness.run(handOff: false) { stack in
            try await recordTwice(stack, user: "answered-1")
            #expect(try await stack.verifierCounter(Self.counter, labels: "outcome=\"handed_over\"") == 0)
            #expect(try await stack.verifierCounter(Self.counter, labels: "outcome=\"other_ledgers\"") == 4)
        }
    }
}
