import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Gateway

/// POST /v1/transactions and version 2 notifications at the HTTP edge, on
/// doubles: what goes to the pool, what to the ledger, what the client hears.
/// (The JWS checks themselves: AppleJWSTests and SignedDataReaderTests.)
@Suite("Signed data routes: /v1/transactions and v2 notifications")
struct SignedDataRouteTests {
    static let jws = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2lnbmF0dXJl"

    @Test func aSignedTransactionIsVerifiedByThePoolThenRecordedLikeAReceipt() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("2000000000000001", "com.example.pro")]) }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/transactions", method: .post, body: jsonBody(["user_id": "u-1", "signed_transaction": Self.jws])
            ) { response in
                #expect(response.status == .ok)
                let transaction = response.json["transaction"] as? [String: Any]
                #expect(transaction?["transaction_id"] as? String == "2000000000000001")
                #expect(transaction?["found"] as? Bool == true)
            }
        }
        let sent = harness.verifier.requests.withLock { $0 }
        guard case .signedTransactionRequest(let request) = sent.first?.body else {
            Issue.record("the pool was not asked to verify a signed transaction")
            return
        }
        #expect(request.signedTransaction == Self.jws)
        #expect(sent.first?.deadlineMs ?? 0 > 0)
        let records = harness.ledger.state.withLock { $0.records }
        #expect(records.map(\.0.userID) == ["u-1"])
    }

    @Test("bodies that are not a user and a compact JWS are 400, and reach nobody", arguments: [
        ["signed_transaction": jws], ["user_id": "u-1"], ["user_id": "u-1", "signed_transaction": "not a jws"],
        ["user_id": "u-1", "signed_transaction": "a.b"], ["user_id": "", "signed_transaction": jws],
        ["user_id": "u-1", "signed_transaction": 7],
    ] as [[String: any Sendable]])
    func badBodiesAreRefused(_ body: [String: any Sendable]) async throws {
        let harness = GatewayHarness()
        try await harness.test { client in
            try await client.execute(uri: "/v1/transactions", method: .post, body: jsonBody(body)) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "bad_request")
            }
        }
        #expect(harness.verifier.requests.withLock { $0 }.isEmpty)
        #expect(harness.ledger.state.withLock { $0.records }.isEmpty)
    }

    @Test func aSignatureThePoolRefusesIs422ForATransactionAnd401ForANotification() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock {
            $0 = .failure(ServiceFailure(.signatureInvalid, message: "the signed data does not verify"))
        }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/transactions", method: .post, body: jsonBody(["user_id": "u-1", "signed_transaction": Self.jws])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorCode == "signature_invalid")
            }
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: jsonBody(["signedPayload": Self.jws])
            ) { response in
                #expect(response.status == .unauthorized)
                #expect(response.errorCode == "unauthorized")
            }
        }
        #expect(harness.ledger.state.withLock { $0.records.isEmpty && $0.notifications.isEmpty })
    }

    @Test func aVerifiedNotificationGoesToTheLedgerAndATestNotificationDoesNot() async throws {
        let harness = GatewayHarness()
        let decoded = NotificationApply.with {
            $0.notificationID = "uuid-1"
            $0.version = .v2
            $0.notificationType = "DID_RENEW"
            $0.originalTransactionID = "2000000000000000"
        }
        harness.verifier.answer.withLock { $0 = .notificationApply(decoded) }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: jsonBody(["signedPayload": Self.jws])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["applied"] as? Bool == true)
            }
            harness.verifier.answer.withLock {
                $0 = .notificationApply(.with {
                    $0.notificationID = "uuid-2"
                    $0.notificationType = "TEST"
                })
            }
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: jsonBody(["signedPayload": Self.jws])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["applied"] as? Bool == false)
            }
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: jsonBody(["signedPayload": 12])
            ) { response in
                #expect(response.status == .badRequest)
            }
        }
        let requests = harness.verifier.requests.withLock { $0 }
        guard case .signedNotificationRequest(let request) = requests.first?.body else {
            Issue.record("the pool was not asked to verify the notification")
            return
        }
        #expect(request.signedPayload == Self.jws && request.receivedAtMs > 0)
        #expect(harness.ledger.state.withLock { $0.notifications }.map(\.notificationID) == ["uuid-1"])
    }
}
