import Contracts
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Gateway

/// A receipt the gateway lets a verifier hand to a ledger (`LedgerHandoff`):
/// asked for only when the gateway need not see the result first, answered
/// from the ledger's `RecordedReceipt` as from its own record, and recorded
/// by the gateway as before when the verifier answers with the result.
@Suite("Receipts recorded on the way (LedgerHandoff), in process")
struct LedgerHandoffRouteTests {
    let receipt = ReceiptDataNormalizerTests.real
    let json: HTTPFields = [.contentType: "application/json"]
    static let route = ReceiptOrchestrator.HandOffRoute(
        route: Data("gateway-test".utf8), ledgers: ["tcp://127.0.0.1:7422", "tcp://127.0.0.1:7522"])

    func body(_ extra: [String: Any] = [:]) -> ByteBuffer {
        jsonBody(["user_id": "u-42", "receipt_data": receipt].merging(extra) { $1 })
    }

    static func recorded() -> Envelope.OneOf_Body {
        .recordedReceipt(.with {
            $0.outcome = .with {
                $0.userID = "u-42"
                $0.granted = [.with {
                    $0.transactionID = "1000"
                    $0.originalTransactionID = "1000"
                    $0.productID = "com.example.pro.monthly"
                    $0.quantity = 1
                }]
            }
            $0.context = .with {
                $0.environment = .sandbox
                $0.bundleID = "com.example.app"
            }
            $0.style = .ios7
            $0.receiptSha256 = String(repeating: "ab", count: 32)
        })
    }

    @Test func aReceiptWithoutClaimsMayBeRecordedOnTheWayAndIsAnsweredFromTheLedgersAnswer() async throws {
        var harness = GatewayHarness()
        harness.handOffRoute = Self.route
        harness.verifier.answer.withLock { $0 = Self.recorded() }
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: body()) { response in
                #expect(response.status == .ok)
                let answer = response.json
                #expect(answer["user_id"] as? String == "u-42")
                #expect(answer["environment"] as? String == "Sandbox", "the context comes from the ledger's answer")
                #expect(answer["bundle_id"] as? String == "com.example.app")
                #expect((answer["granted"] as? [[String: Any]])?.first?["transaction_id"] as? String == "1000")
            }
        }
        let sent = try #require(harness.verifier.requests.withLock { $0.first })
        guard case .verifyRequest(let request) = sent.body else {
            Issue.record("not a verify request")
            return
        }
        #expect(request.hasLedgerHandoff)
        #expect(request.ledgerHandoff.userID == "u-42")
        #expect(request.ledgerHandoff.gatewayRoute == Self.route.route)
        #expect(request.ledgerHandoff.ledgerEndpoints == Self.route.ledgers)
        #expect(
            request.ledgerHandoff.recordDeadlineMs == sent.deadlineMs + ReceiptOrchestrator.recordAllowance.milliseconds,
            "the record's deadline is the one the gateway would have given it")
        #expect(harness.ledger.state.withLock { $0.records.isEmpty }, "the ledger recorded it; the gateway did not")
    }

    @Test func aVerifierThatAnswersWithTheResultLeavesTheRecordToTheGateway() async throws {
        var harness = GatewayHarness()
        harness.handOffRoute = Self.route
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "com.example.pro.monthly")]) }
        harness.ledger.state.withLock { $0.recordAnswer = .success(.with { $0.granted = [.with { $0.transactionID = "1000" }] }) }
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: body()) { response in
                #expect(response.status == .ok)
                #expect((response.json["granted"] as? [[String: Any]])?.first?["transaction_id"] as? String == "1000")
            }
        }
        #expect(harness.ledger.state.withLock { $0.records.map(\.0.userID) } == ["u-42"])
    }

    @Test(arguments: [
        ["product_id": "com.example.pro.monthly"], ["transaction_id": "1000"], ["idempotency": "k-1"],
    ])
    func aReceiptTheGatewayMustSeeFirstIsNeverHandedOver(_ extra: [String: String]) async throws {
        var harness = GatewayHarness()
        harness.handOffRoute = Self.route
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "com.example.pro.monthly")]) }
        var fields = json
        if let key = extra["idempotency"] { fields[IdempotencyHeader.name] = key }
        let headers = fields
        let claims = extra.filter { $0.key != "idempotency" }
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: headers, body: body(claims)) { response in
                #expect(response.status == .ok)
            }
        }
        let sent = try #require(harness.verifier.requests.withLock { $0.first })
        guard case .verifyRequest(let request) = sent.body else {
            Issue.record("not a verify request")
            return
        }
        #expect(!request.hasLedgerHandoff)
        #expect(harness.ledger.state.withLock { $0.records.count } == 1)
    }

    @Test func aGatewayWithoutARouteNeverAsks() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "com.example.pro.monthly")]) }
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: body()) { response in
                #expect(response.status == .ok)
            }
        }
        guard case .verifyRequest(let request) = try #require(harness.verifier.requests.withLock { $0.first }).body else {
            Issue.record("not a verify request")
            return
        }
        #expect(!request.hasLedgerHandoff)
    }
}
