import Contracts
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import Gateway

@Suite("Idempotency-Key and the transaction list, in process")
struct IdempotencyRouteTests {
    let json: HTTPFields = [.contentType: "application/json"]
    let body = jsonBody(["user_id": "u-42", "receipt_data": ReceiptDataNormalizerTests.real])

    func headers(key: String) -> HTTPFields {
        var headers = json
        headers[IdempotencyHeader.name] = key
        return headers
    }

    @Test func theSameKeyAndBodyGetTheFirstAnswerByteForByteWithoutAskingAppleAgain() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "pro")]) }
        harness.ledger.state.withLock {
            $0.recordAnswer = .success(.with { $0.granted = [.with { $0.transactionID = "1000" }] })
        }
        let first = Mutex<ByteBuffer?>(nil)
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: headers(key: "k-1"), body: body) { response in
                #expect(response.status == .ok)
                first.withLock { $0 = response.body }
            }
            // The ledger now has the transaction as granted; only the kept answer says "granted".
            harness.ledger.state.withLock { $0.recordAnswer = .success(.with { $0.alreadyGranted = ["1000"] }) }
            try await client.execute(uri: "/v1/receipts", method: .post, headers: headers(key: "k-1"), body: body) { response in
                #expect(response.status == .ok)
                #expect(response.body == first.withLock { $0 })
                #expect((response.json["granted"] as? [[String: Any]])?.first?["transaction_id"] as? String == "1000")
            }
        }
        #expect(harness.verifier.requests.withLock { $0.count } == 1, "the retry did not ask Apple")
        #expect(harness.ledger.state.withLock { $0.records.count } == 1)
        let sent = harness.ledger.state.withLock { $0.records[0].0 }
        #expect(sent.idempotency.key == "k-1")
        #expect(sent.idempotency.scope.isEmpty, "no API keys configured")
        #expect(sent.idempotency.requestSha256.count == 64)
        #expect(sent.answerContext.bundleID == "com.example.app")
    }

    @Test func theSameKeyWithAnotherBodyIs422() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "pro")]) }
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: headers(key: "k-1"), body: body) { response in
                #expect(response.status == .ok)
            }
            let other = jsonBody(["user_id": "u-43", "receipt_data": ReceiptDataNormalizerTests.real])
            try await client.execute(uri: "/v1/receipts", method: .post, headers: headers(key: "k-1"), body: other) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorCode == "idempotency_key_reused")
            }
        }
        #expect(harness.ledger.state.withLock { $0.records.count } == 1)
    }

    @Test(arguments: [String(repeating: "k", count: 256), "tab\there", "ключ"])
    func aKeyOutsidePrintableASCIIIs400(_ key: String) async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "pro")]) }
        try await harness.test { client in
            var headers = json
            headers[IdempotencyHeader.name] = key
            try await client.execute(uri: "/v1/receipts", method: .post, headers: headers, body: body) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "bad_request")
            }
        }
        #expect(harness.verifier.requests.withLock { $0.isEmpty })
    }

    @Test func theKeyIsScopedToTheAPIKeyThatSentIt() async throws {
        var harness = GatewayHarness()
        harness.environment["STOREKEEPER_API_KEYS"] = "sk-one,sk-two"
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "pro")]) }
        try await harness.test { client in
            for key in ["sk-one", "sk-two"] {
                var headers = headers(key: "k-1")
                headers[.authorization] = "Bearer \(key)"
                try await client.execute(uri: "/v1/receipts", method: .post, headers: headers, body: body) { response in
                    #expect(response.status == .ok)
                }
            }
        }
        let scopes = harness.ledger.state.withLock { $0.records.map(\.0.idempotency.scope) }
        #expect(scopes.count == 2)
        #expect(Set(scopes).count == 2)
        #expect(!scopes.contains { $0.contains("sk-") }, "the scope is a digest, never the key")
    }

    @Test func theTransactionListIsAPageOfTheLedgers() async throws {
        let harness = GatewayHarness()
        harness.ledger.state.withLock {
            $0.transactionsAnswer = .success(.with {
                $0.transactions = [
                    .with {
                        $0.transactionID = "1001"
                        $0.originalTransactionID = "1000"
                        $0.productID = "pro"
                        $0.state = .revoked
                        $0.environment = .production
                        $0.purchaseDateMs = 1_574_316_980_000
                        $0.seq = 9
                    }
                ]
                $0.next = "Y3Vyc29y"
            })
        }
        try await harness.test { client in
            try await client.execute(uri: "/v1/users/u%2042/transactions?after=abc&limit=20", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.json["user_id"] as? String == "u 42")
                #expect(response.json["next"] as? String == "Y3Vyc29y")
                let listed = (response.json["transactions"] as? [[String: Any]])?.first
                #expect(listed?["transaction_id"] as? String == "1001")
                #expect(listed?["original_transaction_id"] as? String == "1000")
                #expect(listed?["state"] as? String == "revoked")
                #expect(listed?["environment"] as? String == "Production")
                #expect(listed?["purchase_date_ms"] as? Int64 == 1_574_316_980_000)
                #expect(listed?["seq"] as? Int == 9)
            }
            for bad in ["limit=0", "limit=201", "limit=ten"] {
                try await client.execute(uri: "/v1/users/u-42/transactions?\(bad)", method: .get) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
            }
        }
        let queries = harness.ledger.state.withLock { $0.transactionQueries }
        #expect(queries.map(\.after) == ["abc"])
        #expect(queries.map(\.limit) == [20])
    }

    @Test func theLastPageHasNoNext() async throws {
        try await GatewayHarness().test { client in
            try await client.execute(uri: "/v1/users/u-42/transactions", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.json.keys.contains("next") == false)
            }
        }
    }
}
