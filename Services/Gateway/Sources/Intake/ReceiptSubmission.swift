import Contracts
import Foundation
import Hummingbird

/// What a client asked in POST /v1/receipts, read from a JSON or form body and
/// checked: a valid user id and a normalized receipt.
struct ReceiptSubmission: Sendable, Equatable {
    var userID: String
    /// Canonical base64, after `ReceiptDataNormalizer`.
    var receiptData: String
    var transactionID: String?
    var productID: String?
    var excludeOldTransactions = false

    static func parse(contentType: String?, body: [UInt8]) throws(IntakeError) -> ReceiptSubmission {
        let fields: Fields = isForm(contentType) ? try form(body) : try json(body)
        let userID = try checkedUserID(fields.userID)
        guard let receipt = fields.receiptData else { throw .badRequest("receipt_data is required") }
        return ReceiptSubmission(
            userID: userID, receiptData: try ReceiptDataNormalizer.normalize(receipt),
            transactionID: fields.transactionID.flatMap { $0.isEmpty ? nil : $0 },
            productID: fields.productID.flatMap { $0.isEmpty ? nil : $0 },
            excludeOldTransactions: fields.excludeOldTransactions ?? false)
    }

    /// Whether `Content-Type` names a form: its media type, before any
    /// parameter, compared without ASCII case and without the spaces and tabs
    /// HTTP allows around it. Read as bytes: this runs on every request.
    static func isForm(_ contentType: String?) -> Bool {
        guard var type = contentType?.utf8.prefix(while: { $0 != UInt8(ascii: ";") }) else { return false }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first = type.first, isSpace(first) { type = type.dropFirst() }
        while let last = type.last, isSpace(last) { type = type.dropLast() }
        return type.elementsEqual(formMediaType) { byte, expected in
            ((0x41...0x5A).contains(byte) ? byte | 0x20 : byte) == expected
        }
    }

    private static let formMediaType = Array("application/x-www-form-urlencoded".utf8)

    /// The app's user id: required, and as `UserIDRule` says.
    static func checkedUserID(_ userID: String?) throws(IntakeError) -> String {
        guard let userID else { throw .badRequest("user_id is required") }
        guard UserIDRule.accepts(userID) else { throw .badRequest(UserIDRule.requirement) }
        return userID
    }

    struct Fields {
        var userID: String?
        var receiptData: String?
        var transactionID: String?
        var productID: String?
        var excludeOldTransactions: Bool?
    }

    /// Fields read in the order JSONDecoder read them, so the first wrong one is the one named.
    private static func json(_ body: [UInt8]) throws(IntakeError) -> Fields {
        let json = try RequestJSON(body)
        let userID = try json.string("user_id")
        let receipt = try json.string("receipt_data")
        let alias = try json.string("receipt-data")
        if let receipt, let alias, receipt != alias { throw .badRequest("receipt_data and receipt-data differ") }
        return Fields(
            userID: userID, receiptData: receipt ?? alias, transactionID: try json.appleID("transaction_id"),
            productID: try json.string("product_id"), excludeOldTransactions: try json.bool("exclude_old_transactions"))
    }

    /// Hummingbird's form decoder: `+` is a space, `%XX` escapes; a broken
    /// escape or a repeated key is refused (a repeated `receipt-data` would
    /// make the request ambiguous), and so is `key[...]` nesting.
    private static func form(_ body: [UInt8]) throws(IntakeError) -> Fields {
        guard let text = String(validating: body, as: UTF8.self) else { throw .badRequest("the form is not UTF-8") }
        let fields: [String: String]
        do {
            fields = try URLEncodedFormDecoder().decode([String: String].self, from: text)
        } catch {
            throw .badRequest("the form could not be read (a broken escape, a repeated or nested field)")
        }
        if let receipt = fields["receipt_data"], let alias = fields["receipt-data"], receipt != alias {
            throw .badRequest("receipt_data and receipt-data differ")
        }
        var exclude: Bool?
        if let flag = fields["exclude_old_transactions"]?.lowercased() {
            switch flag {
            case "true", "1": exclude = true
            case "false", "0", "": exclude = false
            default: throw .badRequest("exclude_old_transactions must be true or false")
            }
        }
        return Fields(
            userID: fields["user_id"], receiptData: fields["receipt_data"] ?? fields["receipt-data"],
            transactionID: fields["transaction_id"], productID: fields["product_id"], excludeOldTransactions: exclude)
    }
}
