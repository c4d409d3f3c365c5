import Foundation
import Testing

/// StoreKit 2 through `storekeeper up --sim` with version 2 notifications: the
/// simulator signs transactions and notifications with its test chain, the
/// verifiers trust that root only because `up --sim` configured it, and the
/// ledger treats signed transactions and receipts as one.
@Suite("StoreKit 2 and notifications v2 end to end", .serialized)
struct StoreKit2WalkTests {
    @Test func aPurchaseItsRenewalsAndARefundEndInTheSameEntitlementsAsTheReceiptPath() async throws {
        try await UpStack.run(environment: ["STOREKEEPER_SIM_NOTIFICATION_VERSION": "2"]) { stack in
            let gateway = stack.gateway
            let purchase = try await HTTPAnswer.call(
                "POST", stack.simulator + "/admin/purchases",
                json: ["account": "sk2-account", "product_id": "com.example.pro.monthly", "type": "auto_renewable",
                       "environment": "sandbox"])
            let signed = try #require(purchase.json["signed_transaction"] as? String)
            let transactionID = try #require(purchase.json["transaction_id"] as? String)
            let originalID = try #require(purchase.json["original_transaction_id"] as? String)

            // The app sends its JWS: verified locally, credited once.
            let first = try await HTTPAnswer.call(
                "POST", gateway + "/v1/transactions", json: ["user_id": "sk2-user", "signed_transaction": signed])
            #expect(first.status == 200)
            #expect(first.json["environment"] as? String == "Sandbox")
            #expect((first.json["granted"] as? [[String: Any]])?.map { $0["transaction_id"] as? String } == [transactionID])
            let again = try await HTTPAnswer.call(
                "POST", gateway + "/v1/transactions", json: ["user_id": "sk2-user", "signed_transaction": signed])
            #expect((again.json["granted"] as? [Any])?.isEmpty == true)
            #expect(again.json["already_granted"] as? [String] == [transactionID])

            // A tampered JWS is refused and changes nothing.
            var parts = signed.split(separator: ".").map(String.init)
            parts[1] = String(parts[1].dropLast(2)) + (parts[1].hasSuffix("AA") ? "BB" : "AA")
            let tampered = try await HTTPAnswer.call(
                "POST", gateway + "/v1/transactions",
                json: ["user_id": "sk2-thief", "signed_transaction": parts.joined(separator: ".")])
            #expect(tampered.status == 422)
            #expect((tampered.json["error"] as? [String: Any])?["code"] as? String == "signature_invalid")
            let thief = try await HTTPAnswer.call("GET", gateway + "/v1/users/sk2-thief/entitlements")
            #expect((thief.json["entitlements"] as? [Any])?.isEmpty == true)

            // Two renewals, each reported by a signed DID_RENEW notification.
            var expires: Int64 = 0
            var renewalIDs: [String] = []
            for _ in 0..<2 {
                let renewed = try await HTTPAnswer.call(
                    "POST", stack.simulator + "/admin/renew", json: ["original_transaction_id": originalID])
                expires = Int64(renewed.json["expires_date_ms"] as? String ?? "") ?? 0
                renewalIDs += renewed.json["transaction_ids"] as? [String] ?? []
            }
            #expect(renewalIDs.count == 2)
            let renewed = try await Self.entitlement(of: "sk2-user", at: gateway) {
                ($0["expires_date_ms"] as? NSNumber)?.int64Value == expires
            }
            #expect((renewed?["expires_date_ms"] as? NSNumber)?.int64Value == expires)
            #expect(renewed?["state"] as? String == "active")

            // The latest renewal is refunded: a signed REFUND notification revokes it and stops renewal.
            let refundedID = try #require(renewalIDs.last)
            // The app also gets the renewal's JWS (Transaction.updates): it came by notification already.
            let signedRenewal = try await HTTPAnswer.call("GET", stack.simulator + "/admin/transactions/\(refundedID)/signed")
            let renewalAnswer = try await HTTPAnswer.call(
                "POST", gateway + "/v1/transactions",
                json: ["user_id": "sk2-user", "signed_transaction": signedRenewal.json["signed_transaction"] as? String ?? ""])
            #expect(renewalAnswer.json["already_granted"] as? [String] == [refundedID])
            _ = try await HTTPAnswer.call("POST", stack.simulator + "/admin/refunds", json: ["transaction_id": refundedID])
            let afterRefund = try await Self.entitlement(of: "sk2-user", at: gateway) { $0["auto_renew"] as? Bool == false }
            #expect(afterRefund?["auto_renew"] as? Bool == false)

            // The receipt path, for the same user, now: it finds nothing new and states the same entitlement.
            let receiptAnswer = try await HTTPAnswer.call(
                "POST", gateway + "/v1/receipts",
                json: ["user_id": "sk2-user", "receipt_data": purchase.json["receipt_data"] as? String ?? ""])
            #expect(receiptAnswer.status == 200)
            #expect((receiptAnswer.json["granted"] as? [Any])?.isEmpty == true)
            #expect(Set(receiptAnswer.json["already_granted"] as? [String] ?? []) == [transactionID, renewalIDs[0]])
            #expect((receiptAnswer.json["revoked"] as? [[String: Any]])?.map { $0["transaction_id"] as? String } == [refundedID])
            let fromSigned = afterRefund
            let fromReceipt = (receiptAnswer.json["entitlements"] as? [[String: Any]])?.first
            for key in ["product_id", "original_transaction_id", "expires_date_ms", "state", "active", "auto_renew"] {
                #expect("\(fromSigned?[key] ?? "nil")" == "\(fromReceipt?[key] ?? "nil")", "\(key)")
            }
        }
    }

    /// The user's first entitlement once `done` holds (polled, bounded: notifications arrive asynchronously).
    static func entitlement(
        of user: String, at gateway: String, until done: ([String: Any]) -> Bool
    ) async throws -> [String: Any]? {
        var last: [String: Any]?
        for _ in 0..<200 {
            let read = try await HTTPAnswer.call("GET", gateway + "/v1/users/\(user)/entitlements")
            last = (read.json["entitlements"] as? [[String: Any]])?.first
            if let last, done(last) { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        return last
    }
}
