import Foundation

/// What a client asked in POST /v1/transactions for one of its users: exactly
/// one of a StoreKit 2 signed transaction (the JWS the app got from StoreKit)
/// or a transaction id, whose signed transaction the verifier pool fetches
/// from the App Store Server API.
struct TransactionSubmission: Sendable, Equatable {
    enum Purchase: Sendable, Equatable {
        case signed(String)
        case transactionID(String)
    }

    var userID: String
    var purchase: Purchase

    /// Apple's transaction ids are decimal numbers (16 digits today); 20 digits hold any 64-bit one.
    static let maxTransactionIDDigits = 20

    static func parse(_ body: [UInt8]) throws(IntakeError) -> TransactionSubmission {
        let json = try RequestJSON(body)
        let user = try json.string("user_id")
        let signedTransaction = try json.string("signed_transaction")
        let transactionID = try json.appleID("transaction_id")
        let userID = try ReceiptSubmission.checkedUserID(user)
        // An empty field counts as absent, as in POST /v1/receipts.
        let jws = signedTransaction?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let id = transactionID ?? ""
        switch (jws.isEmpty, id.isEmpty) {
        case (false, false):
            throw .badRequest("send signed_transaction or transaction_id, not both")
        case (true, true):
            throw .badRequest("signed_transaction or transaction_id is required")
        case (false, true):
            guard CompactJWSShape.matches(jws) else { throw .badRequest("signed_transaction is not a compact JWS") }
            return TransactionSubmission(userID: userID, purchase: .signed(jws))
        case (true, false):
            guard id.utf8.count <= maxTransactionIDDigits,
                id.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { throw .badRequest("transaction_id must be 1-\(maxTransactionIDDigits) digits") }
            return TransactionSubmission(userID: userID, purchase: .transactionID(id))
        }
    }
}
