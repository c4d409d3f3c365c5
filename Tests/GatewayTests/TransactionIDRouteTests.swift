import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Gateway

/// POST /v1/transactions with a transaction id: the intake's rules (exactly
/// one of the JWS and the id; the id digits), what goes to the pool, and the
/// pool's answers as the client hears them. (The pool's side against the
/// simulator: ServerAPITests.)
@Suite("POST /v1/transactions with a transaction_id")
struct TransactionIDRouteTests {
    static let jws = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2lnbmF0dXJl"

    @Test func anIDOrAJWSIsReadAndNothingElse() throws {
        func parsed(_ object: [String: Any]) throws -> TransactionSubmission {
            try TransactionSubmission.parse(Array(try JSONSerialization.data(withJSONObject: object)))
        }
        #expect(
            try parsed(["user_id": "u-1", "transaction_id": "2000000123456789"])
                == TransactionSubmission(userID: "u-1", purchase: .transactionID("2000000123456789")))
        #expect(try parsed(["user_id": "u-1", "transaction_id": 2_000_000_123_456_789]).purchase == .transactionID("2000000123456789"))
        #expect(try parsed(["user_id": "u-1", "signed_transaction": " \(Self.jws)\n"]).purchase == .signed(Self.jws))
        // An empty field is an absent one, as in POST /v1/receipts.
        #expect(try parsed(["user_id": "u-1", "signed_transaction": "", "transaction_id": "42"]).purchase == .transactionID("42"))
    }

    @Test("each refusal says what is wrong", arguments: [
        (["user_id": "u-1", "signed_transaction": jws, "transaction_id": "2000000123456789"] as [String: any Sendable],
         "send signed_transaction or transaction_id, not both"),
        (["user_id": "u-1"], "signed_transaction or transaction_id is required"),
        (["user_id": "u-1", "transaction_id": "", "signed_transaction": "  "], "signed_transaction or transaction_id is required"),
        (["user_id": "u-1", "transaction_id": "2000-0001"], "transaction_id must be 1-20 digits"),
        (["user_id": "u-1", "transaction_id": " 42"], "transaction_id must be 1-20 digits"),
        (["user_id": "u-1", "transaction_id": "../../v1/notifications"], "transaction_id must be 1-20 digits"),
        (["user_id": "u-1", "transaction_id": String(repeating: "9", count: 21)], "transaction_id must be 1-20 digits"),
        (["user_id": "u-1", "transaction_id": -42], "transaction_id must be 1-20 digits"),
        (["user_id": "u-1", "transaction_id": ["42"] as [String]], "transaction_id has the wrong type"),
        (["transaction_id": "42"], "user_id is required"),
    ])
    func refusals(_ body: [String: any Sendable], message: String) throws {
        let bytes = Array(try JSONSerialization.data(withJSONObject: body))
        #expect(throws: IntakeError.badRequest(message)) { try TransactionSubmission.parse(bytes) }
    }

    @Test func anIDIsFetchedByThePoolThenRecordedAsAJWSIs() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("2000000123456789", "com.example.pro")]) }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/transactions", method: .post, headers: [IdempotencyHeader.name: "order-7"],
                body: jsonBody(["user_id": "u-1", "transaction_id": "2000000123456789"])
            ) { response in
                #expect(response.status == .ok)
                let transaction = response.json["transaction"] as? [String: Any]
                #expect(transaction?["transaction_id"] as? String == "2000000123456789")
                #expect(transaction?["found"] as? Bool == true)
            }
        }
        let sent = harness.verifier.requests.withLock { $0 }
        guard case .transactionIDRequest(let request) = sent.first?.body else {
            Issue.record("the pool was not asked to fetch a transaction")
            return
        }
        #expect(request.transactionID == "2000000123456789")
        #expect(sent.first?.deadlineMs ?? 0 > 0)
        let records = harness.ledger.state.withLock { $0.records }
        #expect(records.map(\.0.userID) == ["u-1"])
        #expect(records.first?.0.idempotency.key == "order-7", "kept under its Idempotency-Key as the JWS path keeps it")
    }

    @Test("the pool's failures are the client's answers, and change nothing", arguments: [
        (ServiceFailure(.badRequest, message: "transaction_id needs App Store Server API credentials; send signed_transaction"),
         HTTPResponse.Status.badRequest),
        (ServiceFailure(.receiptInvalid, message: "Apple knows no such transaction"), .unprocessableContent),
        (ServiceFailure(.appleRejectedRequest, message: "Apple refused the App Store Server API credentials"), .badGateway),
        (ServiceFailure(.appleUnavailable, message: "Apple is unavailable; retry later", retryable: true, retryAfterMilliseconds: 2_000),
         .serviceUnavailable),
    ])
    func poolFailures(_ failure: ServiceFailure, status: HTTPResponse.Status) async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = .failure(failure) }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/transactions", method: .post, body: jsonBody(["user_id": "u-1", "transaction_id": "2000000123456789"])
            ) { response in
                #expect(response.status == status)
                #expect(response.errorCode == failure.code)
                #expect((response.json["error"] as? [String: Any])?["message"] as? String == failure.message)
                #expect((response.headers[.retryAfter] != nil) == failure.retryable)
            }
        }
        #expect(harness.ledger.state.withLock { $0.records }.isEmpty)
    }
}
