import Contracts
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Gateway

@Suite("POST /v1/notifications/apple, version 1")
struct NotificationTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: "json"))
        return Array(try Data(contentsOf: url))
    }

    /// A real body with its password set to `secret` (the fixtures are redacted).
    static func body(_ name: String, password: String = "the-secret") throws -> [UInt8] {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(try fixture(name))) as? [String: Any])
        object["password"] = password
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    /// A version 1 body read as the router reads it, with the secret "the-secret".
    static func decode(_ bytes: [UInt8]) throws -> NotificationApply {
        guard case .version1(let body) = try NotificationBody.read(bytes) else { throw APIError.badRequest("version 2") }
        return try NotificationV1Decoder.decode(
            body, bytes: bytes, sharedSecret: .init("the-secret"), bundleIDs: [], receivedAt: 1)
    }

    @Test func aRealRenewalStatusChangeIsDecoded() throws {
        let notification = try Self.decode(try Self.body("did-change-renewal-status-sandbox-2020"))
        #expect(notification.notificationType == "DID_CHANGE_RENEWAL_STATUS")
        #expect(notification.environment == .sandbox)
        #expect(notification.originalTransactionID == "1000000723811158")
        #expect(notification.autoRenewStatus == false)
        #expect(notification.autoRenewStatusChangeDateMs == 1_606_293_002_000)
        #expect(notification.signedDateMs == 0, "version 1 has no time of its own: the change date dates auto-renew alone")
        #expect(notification.receivedAtMs == 1)
        #expect(notification.transactions.count == 54)
        #expect(notification.pendingRenewals.first?.autoRenewStatus == false)
        #expect(notification.notificationID.count == 64)
        #expect(!notification.latestReceipt.isEmpty)
    }

    @Test func aRealRefundCarriesItsCancellation() throws {
        let notification = try Self.decode(try Self.body("refund-consumable-prod-2020-redacted"))
        #expect(notification.notificationType == "REFUND")
        #expect(notification.environment == .production)
        #expect(notification.transactions.first?.cancellationDateMs == 1_595_916_053_000)
    }

    @Test func theNotificationIsPassedToTheLedgerOnlyWithTheRightPassword() async throws {
        var harness = GatewayHarness()
        harness.environment = ["STOREKEEPER_APPLE_SHARED_SECRET": "the-secret"]
        try await harness.test { client in
            for password in ["wrong", "the-secret-", ""] {
                try await client.execute(
                    uri: "/v1/notifications/apple", method: .post, headers: [.contentType: "application/json"],
                    body: .init(bytes: try Self.body("did-renew-library-synthetic", password: password))
                ) { response in
                    #expect(response.status == .unauthorized)
                    #expect(response.errorCode == "unauthorized")
                }
            }
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: .init(bytes: try Self.body("did-renew-library-synthetic"))
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["applied"] as? Bool == true)
            }
        }
        let stored = harness.ledger.state.withLock { $0.notifications }
        #expect(stored.map(\.notificationType) == ["DID_RENEW"])
        #expect(stored.first?.originalTransactionID == "100000000000000")
    }

    @Test func withSandboxRefusedASandboxNotificationIsAcknowledgedButNotApplied() async throws {
        var harness = GatewayHarness()
        harness.environment = ["STOREKEEPER_APPLE_SHARED_SECRET": "the-secret", "STOREKEEPER_ACCEPT_SANDBOX": "false"]
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post,
                body: .init(bytes: try Self.body("did-change-renewal-status-sandbox-2020"))
            ) { response in
                #expect(response.status == .ok, "Apple would retry anything else for days")
                #expect(response.json["applied"] as? Bool == false)
            }
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: .init(bytes: try Self.body("refund-consumable-prod-2020-redacted"))
            ) { response in
                #expect(response.json["applied"] as? Bool == true, "production is applied")
            }
        }
        #expect(harness.ledger.state.withLock { $0.notifications.map(\.environment) } == [.production])
    }

    @Test func withoutASharedSecretNoNotificationIsAccepted() async throws {
        let harness = GatewayHarness()
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: .init(bytes: try Self.body("did-renew-library-synthetic"))
            ) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test func aNotificationForAnotherAppIsRefusedWithBundleMismatch() async throws {
        var harness = GatewayHarness()
        harness.environment = [
            "STOREKEEPER_APPLE_SHARED_SECRET": "the-secret", "STOREKEEPER_BUNDLE_IDS": "com.example.other",
        ]
        try await harness.test { client in
            try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: .init(bytes: try Self.body("did-renew-library-synthetic"))
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(response.errorCode == "bundle_mismatch")
            }
        }
        #expect(harness.ledger.state.withLock { $0.notifications }.isEmpty, "nothing reached the ledger")
        // Its own bundle is accepted.
        let bytes = try Self.body("did-renew-library-synthetic")
        guard case .version1(let body) = try NotificationBody.read(bytes) else { throw APIError.badRequest("version 2") }
        let accepted = try NotificationV1Decoder.decode(
            body, bytes: bytes, sharedSecret: .init("the-secret"), bundleIDs: ["com.example.other", "my.app"], receivedAt: 1)
        #expect(accepted.bundleID == "my.app")
    }

    @Test func anErrorAnswerHasTheSpecsKeysInTheSpecsOrderEveryTime() async throws {
        var harness = GatewayHarness()
        harness.environment = ["STOREKEEPER_APPLE_SHARED_SECRET": "the-secret"]
        try await harness.test { client in
            for _ in 0..<3 {
                try await client.execute(
                    uri: "/v1/notifications/apple", method: .post,
                    body: .init(bytes: try Self.body("did-renew-library-synthetic", password: "wrong"))
                ) { response in
                    #expect(
                        String(decoding: Data(buffer: response.body), as: UTF8.self)
                            == #"{"error":{"code":"unauthorized","message":"the notification password is wrong","retryable":false}}"#)
                }
            }
        }
        #expect(APIError(.productMismatch, "m").status == .unprocessableContent)
        #expect(APIError(ServiceFailure(.deadlineExceeded, message: "late")) == .unavailable, "internal codes are not shown")
    }
}
