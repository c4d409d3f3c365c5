import Contracts
import Foundation
import Testing

@testable import Gateway

@Suite("ReceiptAnswerJSON: every field, keys sorted and escaped as Foundation writes them with sorted keys")
struct ReceiptAnswerJSONTests {
    /// Every optional part present: a found transaction, a grant with and without an expiry,
    /// a revocation, the catalog's access, and a string that needs escaping.
    static let outcome = RecordOutcome.with {
        $0.userID = "u-\"42\"/ü"
        $0.granted = [
            .with {
                $0.transactionID = "1"
                $0.originalTransactionID = "1"
                $0.productID = "com.example.gems"
                $0.quantity = 3
                $0.purchaseDateMs = 1_574_324_473_000
            },
            .with {
                $0.transactionID = "2"
                $0.originalTransactionID = "1000"
                $0.productID = "com.example.pro.monthly"
                $0.quantity = 1
                $0.purchaseDateMs = 1_574_324_473_000
                $0.expiresDateMs = 1_574_324_773_000
            },
        ]
        $0.alreadyGranted = ["7", "8"]
        $0.revoked = [.with {
            $0.transactionID = "9"
            $0.cancellationDateMs = 1_574_324_999_000
        }]
        $0.entitlements = EntitlementJSONTests.outcome.entitlements
        $0.access = EntitlementJSONTests.outcome.access
        $0.accessListed = true
        $0.answerContext = .with {
            $0.environment = .sandbox
            $0.bundleID = "com.example.storekeeper"
            $0.appleStatus = 0
            $0.transactionID = "2"
            $0.transactionFound = true
        }
    }

    /// The same JSON re-rendered by Foundation with sorted keys: equal bytes mean the same
    /// values, the same key order at every depth and the same escaping.
    static func resorted(_ bytes: [UInt8]) throws -> [UInt8] {
        let object = try JSONSerialization.jsonObject(with: Data(bytes))
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    @Test func aReceiptAnswerWithEveryPart() throws {
        let bytes = ReceiptAnswerJSON.receipt(Self.outcome)
        let resorted = try Self.resorted(bytes)
        #expect(bytes == resorted, "\(String(decoding: bytes, as: UTF8.self))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(json["user_id"] as? String == "u-\"42\"/ü")
        #expect(json["environment"] as? String == "Sandbox")
        #expect(json["bundle_id"] as? String == "com.example.storekeeper")
        #expect(json["apple_status"] as? Int == 0)
        #expect(json["already_granted"] as? [String] == ["7", "8"])
        let transaction = try #require(json["transaction"] as? [String: Any])
        #expect(transaction["transaction_id"] as? String == "2" && transaction["found"] as? Bool == true)
        let granted = try #require(json["granted"] as? [[String: Any]])
        #expect(granted.map { $0["transaction_id"] as? String } == ["1", "2"])
        #expect(granted[0]["quantity"] as? Int == 3 && granted[0]["purchase_date_ms"] as? Int64 == 1_574_324_473_000)
        #expect(granted[0].keys.contains("expires_date_ms") == false, "a consumable's grant has no expiry key")
        #expect(granted[1]["expires_date_ms"] as? Int64 == 1_574_324_773_000)
        #expect(granted[1]["original_transaction_id"] as? String == "1000")
        let revoked = try #require(json["revoked"] as? [[String: Any]])
        #expect(revoked.count == 1 && revoked[0]["cancellation_date_ms"] as? Int64 == 1_574_324_999_000)
        #expect((json["entitlements"] as? [Any])?.count == 3)
        #expect((json["access"] as? [Any])?.count == 2)
    }

    @Test func withoutACatalogOrANamedTransactionThoseKeysAreAbsent() throws {
        var outcome = Self.outcome
        outcome.accessListed = false
        outcome.answerContext.clearTransactionFound()
        outcome.granted = []
        outcome.revoked = []
        let bytes = ReceiptAnswerJSON.receipt(outcome)
        let resorted = try Self.resorted(bytes)
        #expect(bytes == resorted, "\(String(decoding: bytes, as: UTF8.self))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(json.keys.sorted() == [
            "already_granted", "apple_status", "bundle_id", "entitlements", "environment", "granted", "revoked", "user_id",
        ])
        #expect((json["granted"] as? [Any])?.isEmpty == true)
    }

    @Test func anEntitlementsAnswer() throws {
        let answer = EntitlementsAnswer.with {
            $0.userID = "u-1"
            $0.entitlements = EntitlementJSONTests.outcome.entitlements
            $0.access = EntitlementJSONTests.outcome.access
            $0.accessListed = true
        }
        let bytes = ReceiptAnswerJSON.entitlements(answer)
        let resorted = try Self.resorted(bytes)
        #expect(bytes == resorted, "\(String(decoding: bytes, as: UTF8.self))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(json.keys.sorted() == ["access", "entitlements", "user_id"])
        var plain = answer
        plain.accessListed = false
        let plainJSON = try JSONSerialization.jsonObject(with: Data(ReceiptAnswerJSON.entitlements(plain))) as? [String: Any]
        #expect(plainJSON?.keys.sorted() == ["entitlements", "user_id"])
    }

    @Test func theSameOutcomeRendersTheSameBytes() {
        #expect(ReceiptAnswerJSON.receipt(Self.outcome) == ReceiptAnswerJSON.receipt(Self.outcome))
    }
}
