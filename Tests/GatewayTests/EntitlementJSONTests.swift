import Contracts
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Gateway

@Suite("Entitlements of every kind in the answers' JSON")
struct EntitlementJSONTests {
    static let outcome = RecordOutcome.with {
        $0.entitlements = [
            .with {
                $0.kind = .autoRenewable
                $0.productID = "com.example.pro.monthly"
                $0.originalTransactionID = "1000"
                $0.environment = .production
                $0.expiresDateMs = 1_574_324_473_000
                $0.active = true
                $0.autoRenew = true
                $0.autoRenewProductID = "com.example.pro.yearly"
                $0.autoRenewAccess = ["pro", "archive"]
                $0.state = .active
            },
            .with {
                $0.kind = .nonConsumable
                $0.productID = "com.example.removeads"
                $0.originalTransactionID = "2000"
                $0.environment = .production
                $0.active = true
                $0.state = .active
            },
            .with {
                $0.kind = .nonRenewing
                $0.productID = "com.example.season.pass"
                $0.originalTransactionID = "3000"
                $0.environment = .sandbox
                $0.expiresDateMs = 1_582_273_380_000
                $0.active = true
                $0.state = .active
            },
        ]
        $0.access = [
            .with {
                $0.name = "no_ads"
                $0.active = true
                $0.productID = "com.example.removeads"
            },
            .with {
                $0.name = "pro"
                $0.active = true
                $0.productID = "com.example.pro.monthly"
                $0.expiresDateMs = 1_574_324_473_000
            },
        ]
        $0.accessListed = true
    }

    @Test func kindAccessAndTheProductARenewalGoesTo() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "com.example.pro.monthly")]) }
        harness.ledger.state.withLock { $0.recordAnswer = .success(Self.outcome) }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/receipts", method: .post, headers: [.contentType: "application/json"],
                body: jsonBody(["user_id": "u-42", "receipt_data": ReceiptDataNormalizerTests.real])
            ) { response in
                #expect(response.status == .ok)
                let entitlements = try #require(response.json["entitlements"] as? [[String: Any]])
                #expect(entitlements.map { $0["kind"] as? String } == ["auto_renewable", "non_consumable", "non_renewing"])
                #expect(entitlements[0]["auto_renew_product_id"] as? String == "com.example.pro.yearly")
                #expect(entitlements[0]["auto_renew_access"] as? [String] == ["pro", "archive"], "where the plan goes, with a catalog")
                #expect(entitlements[1].keys.contains("auto_renew_product_id") == false)
                #expect(entitlements[1].keys.contains("auto_renew_access") == false)
                #expect(entitlements[1]["expires_date_ms"] is NSNull, "a non-consumable has no expiry")
                #expect(entitlements[2]["expires_date_ms"] as? Int64 == 1_582_273_380_000)
                let access = try #require(response.json["access"] as? [[String: Any]])
                #expect(access.map { $0["name"] as? String } == ["no_ads", "pro"])
                #expect(access[0]["expires_date_ms"] is NSNull)
                #expect(access[1]["product_id"] as? String == "com.example.pro.monthly")
                #expect(access[1]["active"] as? Bool == true)
            }
        }
    }

    @Test func withoutACatalogThereIsNoAccessField() async throws {
        let harness = GatewayHarness()
        harness.verifier.answer.withLock { $0 = VerifierDouble.result([("1000", "com.example.pro.monthly")]) }
        var outcome = Self.outcome
        outcome.access = []
        outcome.accessListed = false
        harness.ledger.state.withLock { $0.recordAnswer = .success(outcome) }
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/receipts", method: .post, headers: [.contentType: "application/json"],
                body: jsonBody(["user_id": "u-42", "receipt_data": ReceiptDataNormalizerTests.real])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json.keys.contains("access") == false)
            }
        }
    }
}
