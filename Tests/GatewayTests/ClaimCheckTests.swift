import Contracts
import Foundation
import Testing

@testable import Gateway

/// What the client claims (`transaction_id`, `product_id`) against a real
/// receipt's purchases (Apple's upgrade pair answer, RevenueCat's sandbox).
@Suite("The client's claims against a real receipt")
struct ClaimCheckTests {
    static let result: VerifyResult = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AppleFormatsTests/Fixtures/verifyreceipt/status0-sandbox-upgrade-pair-revenuecat.json")
        let body = try! JSONSerialization.jsonObject(with: try! Data(contentsOf: url)) as! [String: Any]
        let inApp = (body["receipt"] as! [String: Any])["in_app"] as! [[String: Any]]
        return VerifyResult.with {
            $0.environment = .sandbox
            $0.transactions = inApp.map { purchase in
                .with {
                    $0.transactionID = purchase["transaction_id"] as! String
                    $0.originalTransactionID = purchase["original_transaction_id"] as! String
                    $0.productID = purchase["product_id"] as! String
                }
            }
        }
    }()

    static func check(transaction: String?, product: String?) -> Result<Bool?, APIError> {
        let submission = ReceiptSubmission(
            userID: "u-1", receiptData: "QQ==", transactionID: transaction, productID: product)
        return Result { () throws(APIError) in try ReceiptOrchestrator.check(submission, against: result) }
    }

    @Test("Defect 5: a named transaction absent from the receipt does not let any product_id pass")
    func anAbsentTransactionDoesNotWeakenTheProductCheck() {
        #expect(Self.check(transaction: "9999999999", product: "com.example.not.in.the.receipt").failureCode == "product_mismatch")
        let product = Self.result.transactions[0].productID
        #expect(Self.check(transaction: "9999999999", product: product) == .success(false))
    }

    @Test func aNamedTransactionMustBeOfTheNamedProduct() {
        let purchases = Self.result.transactions
        let other = purchases.first { $0.productID != purchases[0].productID }!
        #expect(Self.check(transaction: purchases[0].transactionID, product: purchases[0].productID) == .success(true))
        #expect(Self.check(transaction: purchases[0].transactionID, product: other.productID).failureCode == "product_mismatch")
        #expect(Self.check(transaction: nil, product: other.productID) == .success(nil))
    }
}

extension Result where Failure == APIError {
    var failureCode: String? {
        if case .failure(let error) = self { return error.code.rawValue }
        return nil
    }
}
