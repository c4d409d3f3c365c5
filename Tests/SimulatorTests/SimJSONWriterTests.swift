import Foundation
import Testing

@testable import Simulator

/// The simulator's JSON writer must give the same JSON as JSONSerialization.
@Suite struct SimJSONWriterTests {
    /// Both parsed back by JSONSerialization, then compared as Foundation objects.
    func expectSameJSON(_ object: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = SimJSONWriter.data(object)
        let theirs = try JSONSerialization.data(withJSONObject: object)
        let parsedOurs = try JSONSerialization.jsonObject(with: ours) as? NSDictionary
        let parsedTheirs = try JSONSerialization.jsonObject(with: theirs) as? NSDictionary
        #expect(parsedOurs != nil, "not valid JSON: \(String(decoding: ours, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(parsedOurs == parsedTheirs, sourceLocation: sourceLocation)
    }

    @Test func everyKindOfValueAndEveryEscape() throws {
        try expectSameJSON([
            "string": "plain", "empty": "", "quote": #"say "hi""#, "backslash": #"a\b"#, "slash": "MIIT/AAA+b==",
            "controls": "tab\tnew\nline\rback\u{8}feed\u{c}bell\u{7}nul\u{0}", "unicode": "Grüße, 日本, 🎉",
            "int": 21007, "negative": -1, "int64": Int64(1_700_000_000_000), "int32": Int32(7),
            "true": true, "false": false, "double": 1.5, "null": NSNull(),
            "object": ["nested": ["deeper": [1, "two", false]]] as [String: Any],
            "objects": [["a": "1"], ["b": "2"]], "strings": ["x", "y/z"], "mixed": [1, "1", true] as [Any],
            "emptyArray": [Any](), "emptyObject": [String: Any](),
        ])
        #expect(String(decoding: SimJSONWriter.data(["s": "a/b\"c"]), as: UTF8.self) == #"{"s":"a\/b\"c"}"#)
    }

    @Test func aRealAnswerIsTheSameJSON() throws {
        let t0: Int64 = 1_700_000_000_000
        var store = SimStore()
        let purchase = try store.purchase(
            account: "a", productID: "pro.monthly", type: .autoRenewable, period: .month, quantity: 1,
            environment: .sandbox, now: t0)
        _ = store.renewDue(now: t0 + 3_600_000)
        _ = try store.refund(transactionID: purchase.transactionID, reason: 1, now: t0 + 3_600_000)
        let responder = SimVerifyResponder(bundleID: "com.example.storekeeper", sharedSecret: "secret")
        let body = try JSONSerialization.data(withJSONObject: ["receipt-data": purchase.receiptData, "password": "secret"])
        let answer = responder.answer(Array(body), at: .sandbox, store: &store, now: t0 + 3_600_000)
        #expect((answer["latest_receipt_info"] as? [[String: Any]])?.count == 6)
        try expectSameJSON(answer)
    }
}
