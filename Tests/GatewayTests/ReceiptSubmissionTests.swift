import Contracts
import Foundation
import PropertyBased
import Testing

@testable import Gateway

@Suite("POST /v1/receipts bodies: JSON and form")
struct ReceiptSubmissionTests {
    let receipt = ReceiptDataNormalizerTests.real

    func parse(_ body: String, form: Bool = false) throws(IntakeError) -> ReceiptSubmission {
        try ReceiptSubmission.parse(
            contentType: form ? "application/x-www-form-urlencoded; charset=utf-8" : "application/json",
            body: Array(body.utf8))
    }

    func code(_ body: String, form: Bool = false) -> FailureCode? {
        do {
            _ = try parse(body, form: form)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aFullJSONBody() throws {
        let submission = try parse(
            #"{"user_id":"u-42","receipt_data":"\#(receipt)","transaction_id":"1000000595277992","product_id":"p","exclude_old_transactions":true,"extra":1}"#)
        #expect(submission == ReceiptSubmission(
            userID: "u-42", receiptData: receipt, transactionID: "1000000595277992", productID: "p",
            excludeOldTransactions: true))
    }

    @Test func theHyphenAliasAndANumericTransactionID() throws {
        let submission = try parse(#"{"user_id":"u","receipt-data":"\#(receipt)","transaction_id":1000000595277992}"#)
        #expect(submission.receiptData == receipt)
        #expect(submission.transactionID == "1000000595277992")
    }

    @Test func aFormBodyWhereTheClientLeftPlusSignsRaw() throws {
        // A sloppy client: + sent as is, which form decoding reads as a space.
        let submission = try parse("user_id=u-1&receipt-data=\(receipt)&exclude_old_transactions=1", form: true)
        #expect(submission.receiptData == receipt)
        #expect(submission.excludeOldTransactions)
    }

    @Test func aFormBodyEncodedProperly() throws {
        let encoded = receipt.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let submission = try parse("receipt_data=\(encoded)&user_id=u%2D1", form: true)
        #expect(submission.receiptData == receipt)
        #expect(submission.userID == "u-1")
    }

    @Test func anyReceiptThroughAnyFormClientComesBackIdentical() async {
        await propertyCheck(
            count: 200, input: Gen.uint8(in: 0...255).array(of: 1...400), Gen.int(in: 0...2), Gen.bool
        ) { bytes, shape, proper in
            let canonical = Data(ReceiptDataNormalizerTests.receipt(bytes, shape: shape)).base64EncodedString()
            let value = proper ? canonical.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! : canonical
            let submission = try parse("user_id=u&receipt-data=\(value)", form: true)
            #expect(submission.receiptData == canonical)
        }
    }

    @Test(arguments: [
        #"{"receipt_data":"QQ=="}"#, #"{"user_id":"u"}"#, #"{"user_id":"","receipt_data":"QQ=="}"#,
        #"{"user_id":"\#(String(repeating: "x", count: 129))","receipt_data":"QQ=="}"#,
        #"{"user_id":"a\u0007b","receipt_data":"QQ=="}"#, #"{"user_id":42,"receipt_data":"QQ=="}"#,
        #"{"user_id":"u","receipt_data":"QQ==","exclude_old_transactions":"yes"}"#, #"{"user_id":"u","#, "[1,2]",
        #"{"user_id":"u","receipt_data":"QQ==","receipt-data":"Qg=="}"#,
    ])
    func badJSONBodiesAreBadRequests(_ body: String) {
        #expect(code(body) == .badRequest)
    }

    @Test("each refusal names what is wrong, the first field in reading order", arguments: [
        (#"{"user_id":42,"receipt_data":true}"#, "user_id has the wrong type"),
        (#"{"user_id":"u","receipt_data":["QQ=="]}"#, "receipt_data has the wrong type"),
        (#"{"user_id":"u","receipt_data":"QQ==","transaction_id":1.5}"#, "transaction_id has the wrong type"),
        (#"{"user_id":"u","receipt_data":"QQ==","transaction_id":true}"#, "transaction_id has the wrong type"),
        (#"{"user_id":"u","receipt_data":"QQ==","product_id":7}"#, "product_id has the wrong type"),
        (#"{"user_id":"u","receipt_data":"QQ==","exclude_old_transactions":1}"#, "exclude_old_transactions has the wrong type"),
        (#"{"user_id":"u","receipt_data":"QQ==","receipt-data":"Qg=="}"#, "receipt_data and receipt-data differ"),
        (#"{"user_id":"u","receipt_data":"QQ=="} x"#, "the body is not a JSON object"),
        ("\"u\"", "the body is not a JSON object"),
        (#"{"user_id":"a","receipt_data":"QQ==","user_id":"b"}"#, "the body repeats a field"),
        (#"{"user_id":"a","receipt_data":"QQ==","x":{"k":1,"k":2}}"#, "the body repeats a field"),
        // Read as U+FFFD, "\ud800" and "\udfff" would be one user.
        (#"{"user_id":"a\ud800","receipt_data":"QQ=="}"#, "the body escapes half of a UTF-16 surrogate pair"),
        (#"{"user_id":"a\udfff\ud800","receipt_data":"QQ=="}"#, "the body escapes half of a UTF-16 surrogate pair"),
        (#"{"user_id":"a\ud800\u0041","receipt_data":"QQ=="}"#, "the body escapes half of a UTF-16 surrogate pair"),
    ])
    func refusalMessages(_ body: String, _ message: String) {
        #expect(throws: IntakeError.badRequest(message)) { try parse(body) }
    }

    @Test func aBodyThatIsNotUTF8IsRefusedNotMended() {
        let body = Array(#"{"user_id":"u"#.utf8) + [0xFF] + Array(#"","receipt_data":"QQ=="}"#.utf8)
        #expect(throws: IntakeError.badRequest("the body is not a JSON object")) {
            try ReceiptSubmission.parse(contentType: "application/json", body: body)
        }
    }

    @Test func aByteOrderMarkBeforeTheJSONIsSkipped() throws {
        let body = [0xEF, 0xBB, 0xBF] + Array(#"{"user_id":"u","receipt_data":"QQ=="}"#.utf8)
        #expect(try ReceiptSubmission.parse(contentType: "application/json", body: body).userID == "u")
    }

    @Test func aSurrogatePairEscapeIsOneCharacter() throws {
        #expect(try parse(#"{"user_id":"\ud83d\ude00","receipt_data":"QQ=="}"#).userID == "😀")
    }

    @Test func nullFieldsAreAbsentAndEscapesAreRead() throws {
        let submission = try parse(
            #"{"user_id":"u\u002d1","receipt_data":"QQ\u003d\u003d","transaction_id":null,"product_id":null,"exclude_old_transactions":null}"#)
        #expect(submission == ReceiptSubmission(userID: "u-1", receiptData: "QQ==", transactionID: nil, productID: nil))
    }

    @Test(arguments: ["user_id=u&receipt_data=QQ%3", "user_id=u&user_id=v&receipt_data=QQ==", "receipt_data=QQ==",
        "user_id=u&receipt_data=QQ==&exclude_old_transactions=maybe"])
    func badFormBodiesAreBadRequests(_ body: String) {
        #expect(code(body, form: true) == .badRequest)
    }

    @Test func aReceiptThatIsNotBase64IsBadReceiptEncoding() {
        #expect(code(#"{"user_id":"u","receipt_data":"not base64 at all!"}"#) == .badReceiptEncoding)
    }

    @Test func theLongestUserIDIsAccepted() throws {
        let user = String(repeating: "é", count: 128)
        #expect(try parse(#"{"user_id":"\#(user)","receipt_data":"QQ=="}"#).userID == user)
    }

    @Test(arguments: [
        ("application/x-www-form-urlencoded", true), (" Application/X-WWW-Form-URLEncoded\t; charset=utf-8", true),
        ("application/x-www-form-urlencoded;charset=utf-8", true), ("application/json", false), (nil, false),
        ("application/x-www-form-urlencodedx", false), ("text/application/x-www-form-urlencoded", false), ("", false),
    ] as [(String?, Bool)])
    func theFormIsNamedByItsMediaTypeWithoutCaseOrSpaces(_ contentType: String?, _ isForm: Bool) {
        #expect(ReceiptSubmission.isForm(contentType) == isForm)
    }
}
