import Foundation

/// What a client asked in POST /v1/transactions: a StoreKit 2 signed
/// transaction (the JWS the app got from StoreKit) for one of its users.
struct SignedTransactionSubmission: Sendable, Equatable {
    var userID: String
    var signedTransaction: String

    private struct Fields: Decodable {
        var user_id: String?
        var signed_transaction: String?
    }

    static func parse(_ body: [UInt8]) throws(IntakeError) -> SignedTransactionSubmission {
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(body))
        } catch DecodingError.typeMismatch(_, let context) {
            throw .badRequest("\(context.codingPath.last?.stringValue ?? "a field") has the wrong type")
        } catch {
            throw .badRequest("the body is not a JSON object")
        }
        let userID = try ReceiptSubmission.checkedUserID(fields.user_id)
        guard let jws = fields.signed_transaction?.trimmingCharacters(in: .whitespacesAndNewlines), !jws.isEmpty else {
            throw .badRequest("signed_transaction is required")
        }
        guard CompactJWSShape.matches(jws) else { throw .badRequest("signed_transaction is not a compact JWS") }
        return SignedTransactionSubmission(userID: userID, signedTransaction: jws)
    }
}
