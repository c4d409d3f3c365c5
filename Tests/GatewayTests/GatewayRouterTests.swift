import Contracts
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Gateway

@Suite("Gateway HTTP API, in process")
struct GatewayRouterTests {
    let receipt = ReceiptDataNormalizerTests.real
    let json: HTTPFields = [.contentType: "application/json"]

    func body(_ extra: [String: Any] = [:]) -> ByteBuffer {
        jsonBody(["user_id": "u-42", "receipt_data": receipt].merging(extra) { $1 })
    }

    @Test func aReceiptIsVerifiedThenRecordedAndAnsweredInTheContractShape() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "com.example.pro.monthly")]) }
        harness.ledger.state.withLock {
            $0.recordAnswer = .success(.with {
                $0.granted = [.with {
                    $0.transactionID = "1000"
                    $0.originalTransactionID = "1000"
                    $0.productID = "com.example.pro.monthly"
                    $0.quantity = 1
                    $0.purchaseDateMs = 1_574_316_980_000
                    $0.expiresDateMs = 1_574_317_280_000
                }]
                $0.entitlements = [.with {
                    $0.productID = "com.example.pro.monthly"
                    $0.originalTransactionID = "1000"
                    $0.environment = .sandbox
                    $0.expiresDateMs = 1_574_324_473_000
                    $0.active = true
                    $0.autoRenew = true
                    $0.state = .active
                }]
            })
        }
        try await harness.test { client in
            var headers = json
            headers[.requestID] = "req-abc"
            try await client.execute(
                uri: "/v1/receipts", method: .post, headers: headers,
                body: body(["transaction_id": "1000", "product_id": "com.example.pro.monthly"])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.requestID] == "req-abc")
                let answer = response.json
                #expect(answer["user_id"] as? String == "u-42")
                #expect(answer["environment"] as? String == "Sandbox")
                #expect(answer["bundle_id"] as? String == "com.example.app")
                #expect((answer["transaction"] as? [String: Any])?["found"] as? Bool == true)
                let granted = answer["granted"] as? [[String: Any]]
                #expect(granted?.first?["expires_date_ms"] as? Int64 == 1_574_317_280_000)
                let entitlement = (answer["entitlements"] as? [[String: Any]])?.first
                #expect(entitlement?["state"] as? String == "active")
                #expect(entitlement?["active"] as? Bool == true)
                #expect(answer["already_granted"] as? [String] == [])
            }
        }
        let verified = try #require(harness.verifier.requests.withLock { $0.first })
        #expect(verified.requestID == "req-abc", "the request id travels in the envelope")
        #expect(verified.deadlineMs > 0)
        let recorded = try #require(harness.ledger.state.withLock { $0.records.first })
        #expect(recorded.1 == "req-abc")
        #expect(
            recorded.2 == verified.deadlineMs + ReceiptOrchestrator.recordAllowance.milliseconds,
            "one deadline: the record's is the verification's and the allowance for recording")
    }

    @Test func aRequestWithoutAnIDGetsOne() async throws {
        try await GatewayHarness().test { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect((response.headers[.requestID] ?? "").count >= 16)
            }
        }
    }

    @Test(arguments: [
        (Envelope.OneOf_Body.failure(.init(.receiptInvalid, message: "x", appleStatus: 21003)), HTTPResponse.Status.unprocessableContent, "receipt_invalid"),
        (.failure(.init(.bundleMismatch, message: "x")), .unprocessableContent, "bundle_mismatch"),
        (.failure(.init(.sharedSecretMismatch, message: "x", appleStatus: 21004)), .badGateway, "shared_secret_mismatch"),
        (.failure(.init(.appleUnavailable, message: "x", appleStatus: 21005, retryable: true, retryAfterMilliseconds: 3_000)), .serviceUnavailable, "apple_unavailable"),
        (.failure(.init(.internalError, message: "x")), .serviceUnavailable, "service_unavailable"),
        (.failure(.init(.appleRejectedRequest, message: "x", appleStatus: 21000)), .badGateway, "apple_rejected_request"),
    ])
    func verifierFailuresMapToTheContract(_ answer: Envelope.OneOf_Body, _ status: HTTPResponse.Status, _ code: String) async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = answer }
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: body()) { response in
                #expect(response.status == status)
                #expect(response.errorCode == code)
                if case .failure(let failure) = answer, failure.hasAppleStatus {
                    #expect((response.json["error"] as? [String: Any])?["apple_status"] as? Int == Int(failure.appleStatus))
                }
                if status == .serviceUnavailable {
                    #expect(response.headers[.retryAfter] != nil)
                    #expect((response.json["error"] as? [String: Any])?["retryable"] as? Bool == true)
                } else {
                    #expect((response.json["error"] as? [String: Any])?["retryable"] as? Bool == false)
                }
            }
        }
        #expect(harness.ledger.state.withLock { $0.records.isEmpty }, "an error never reaches the ledger")
    }

    @Test func noVerifierAnsweringIsA503() async throws {
        let harness = GatewayHarness()
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: body()) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] != nil)
            }
        }
    }

    @Test func theLedgerRefusingOrFailingIsNeverASuccess() async throws {
        for (failure, status, code) in [
            (ServiceFailure(.alreadyBound, message: "x") as any Error, HTTPResponse.Status.conflict, "already_bound"),
            (CancellationError() as any Error, .serviceUnavailable, "service_unavailable"),
        ] {
            let harness = GatewayHarness()
            harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "p")]) }
            harness.ledger.state.withLock { $0.recordAnswer = .failure(failure) }
            try await harness.test { client in
                try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: body()) { response in
                    #expect(response.status == status)
                    #expect(response.errorCode == code)
                }
            }
        }
    }

    @Test func productAndTransactionChecks() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "gems"), ("1001", "pro")]) }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/receipts", method: .post, headers: json, body: body(["transaction_id": "1000", "product_id": "pro"])
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorCode == "product_mismatch")
            }
            try await client.execute(
                uri: "/v1/receipts", method: .post, headers: json, body: body(["transaction_id": "9999"])
            ) { response in
                #expect(response.status == .ok)
                #expect((response.json["transaction"] as? [String: Any])?["found"] as? Bool == false)
            }
        }
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([]) }
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: body()) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorCode == "receipt_invalid")
            }
        }
    }

    @Test func badBodiesAndEncodings() async throws {
        let harness = GatewayHarness()
        try await harness.test { client in
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: ByteBuffer(string: "{")) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "bad_request")
            }
            try await client.execute(
                uri: "/v1/receipts", method: .post, headers: json, body: jsonBody(["user_id": "u", "receipt_data": "***"])
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "bad_receipt_encoding")
                #expect(!String(buffer: response.body).contains("***"))
            }
        }
        #expect(harness.verifier.requests.withLock { $0.isEmpty })
    }

    @Test func bodiesOverTheLimitAre413() async throws {
        var harness = GatewayHarness()
        harness.environment = ["STOREKEEPER_MAX_BODY_BYTES": "2048"]
        try await harness.test { client in
            let big = jsonBody(["user_id": "u", "receipt_data": String(repeating: "A", count: 4_096)])
            try await client.execute(uri: "/v1/receipts", method: .post, headers: json, body: big) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.errorCode == "payload_too_large")
            }
        }
    }

    @Test func apiKeysAreRequiredWhenConfigured() async throws {
        var harness = GatewayHarness()
        harness.environment = ["STOREKEEPER_API_KEYS": "key-one,key-two"]
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "p")]) }
        try await harness.test { client in
            for authorization in [nil, "Bearer nope", "Basic key-one", "Bearer key-one2", "Bearer "] as [String?] {
                var headers = json
                if let authorization { headers[.authorization] = authorization }
                try await client.execute(uri: "/v1/receipts", method: .post, headers: headers, body: body()) { response in
                    #expect(response.status == .unauthorized, "\(authorization ?? "none")")
                    #expect(response.errorCode == "unauthorized")
                }
                try await client.execute(uri: "/v1/users/u-42/entitlements", method: .get, headers: headers) { response in
                    #expect(response.status == .unauthorized)
                }
            }
            var headers = json
            headers[.authorization] = "Bearer key-two"
            try await client.execute(uri: "/v1/receipts", method: .post, headers: headers, body: body()) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok, "health needs no key")
            }
        }
    }

    @Test func eachKeyIsRateLimited() async throws {
        var harness = GatewayHarness()
        harness.environment = ["STOREKEEPER_API_KEYS": "a,b", "STOREKEEPER_RATE_LIMIT_PER_MINUTE": "3"]
        try await harness.test { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<4 {
                try await client.execute(uri: "/v1/users/u/entitlements", method: .get, headers: [.authorization: "Bearer a"]) {
                    statuses.append($0.status)
                    if $0.status == .tooManyRequests {
                        #expect($0.errorCode == "rate_limited")
                        #expect($0.headers[.retryAfter] != nil)
                    }
                }
            }
            #expect(statuses == [.ok, .ok, .ok, .tooManyRequests])
            try await client.execute(uri: "/v1/users/u/entitlements", method: .get, headers: [.authorization: "Bearer b"]) {
                #expect($0.status == .ok, "another key has its own budget")
            }
        }
    }

    @Test func entitlementsAreReadFromTheLedger() async throws {
        try await GatewayHarness().test { client in
            try await client.execute(uri: "/v1/users/u-42/entitlements", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.json["user_id"] as? String == "u-42")
                let entitlement = (response.json["entitlements"] as? [[String: Any]])?.first
                #expect(entitlement?["state"] as? String == "expired")
                #expect(entitlement?["environment"] as? String == "Sandbox")
            }
        }
    }

    @Test func readinessNeedsTheLedgerAndAVerifier() async throws {
        for (ready, status) in [
            (GatewayRouter.Readiness(ledger: true, verifiers: 1), HTTPResponse.Status.ok),
            (GatewayRouter.Readiness(ledger: false, verifiers: 2), .serviceUnavailable),
            (GatewayRouter.Readiness(ledger: true, verifiers: 0), .serviceUnavailable),
        ] {
            var harness = GatewayHarness()
            harness.ready = ready
            try await harness.test { client in
                try await client.execute(uri: "/readyz", method: .get) { #expect($0.status == status) }
            }
        }
    }

    @Test func aUserIDWithASpaceOrSlashArrivesDecoded() async throws {
        try await GatewayHarness().test { client in
            try await client.execute(uri: "/v1/users/a%20b%2Fc/entitlements", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.json["user_id"] as? String == "a b/c")
            }
        }
    }

    @Test func metricsAreServed() async throws {
        try await GatewayHarness().test { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            }
        }
    }
}
