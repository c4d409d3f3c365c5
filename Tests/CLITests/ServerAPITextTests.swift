import AppleJWS
import Contracts
import Foundation
import Testing
import Verifier

@testable import StorekeeperCLI

/// `storekeeper apple`'s human view and JSON view.
@Suite struct ServerAPITextTests {
    static func transaction(_ id: String, original: String, expires: Int64?, refunded: Int64? = nil) -> Transaction {
        var transaction = Transaction()
        transaction.transactionID = id
        transaction.originalTransactionID = original
        transaction.productID = "com.example.pro.monthly"
        transaction.purchaseDateMs = 1_700_000_000_000
        if let expires { transaction.expiresDateMs = expires }
        if let refunded { transaction.cancellationDateMs = refunded }
        return transaction
    }

    @Test func aHistoryIsOneLineATransaction() {
        let answer = ServerAPITransactions(
            environment: .sandbox,
            transactions: [
                Self.transaction("2001", original: "2001", expires: 1_700_000_300_000, refunded: 1_700_000_100_000),
                Self.transaction("2002", original: "2001", expires: 1_700_000_600_000),
            ],
            signedTransactions: [], revision: "7")
        let lines = ServerAPIText.transactions("history", answer)
        #expect(lines[0] == "history (Sandbox): 2 transactions, revision 7")
        #expect(lines[1] == "  2001  com.example.pro.monthly  bought 2023-11-14T22:13:20Z  until 2023-11-14T22:18:20Z  REFUNDED 2023-11-14T22:15:00Z")
        #expect(lines[2].hasSuffix("original 2001"))
    }

    @Test func theJSONViewDecodesEachVerifiedJWS() throws {
        let jws = try SignedDataSigner.simulator().sign(Array(#"{"transactionId":"2001","productId":"p"}"#.utf8))
        let object = ServerAPIText.json(
            ServerAPITransactions(environment: .production, transactions: [], signedTransactions: [jws], revision: nil))
        #expect(object["environment"] as? String == "Production")
        let first = try #require((object["transactions"] as? [Any])?.first as? [String: Any])
        #expect(first["transactionId"] as? String == "2001")
        #expect(object["revision"] == nil)
    }
}
