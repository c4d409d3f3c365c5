import Foundation
import PropertyBased
import Testing

@testable import AppleFormats

@Suite struct JSONValueParserTests {
    static let fixtures = [
        "latest-receipt-info-sandbox-5min-renewals", "status0-ios6-autorenew-legacy",
        "status0-ios6-masked-int-auto-renew-status", "status0-ios7-autorenew-42-inapp-anonymized",
        "status0-ios7-numbers-as-ints", "status0-ios7-production-2014",
        "status0-sandbox-5min-renewals-no-otid-in-pending", "status0-sandbox-upgrade-pair-revenuecat", "status21002",
        "status21006-ios6-expired-autorenew",
    ]

    @Test(arguments: fixtures)
    func readsEveryRealAnswerAsJSONDecoderDoes(_ name: String) throws {
        let bytes = try Fixture.bytes(name)
        let expected = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        #expect(try JSONValueParser.parse(bytes) == expected)
    }

    @Test func stringsNumbersAndEscapes() throws {
        let text = #"{"a": "x\"y\\z\/\n\t\u00e9\ud83d\ude00", "b": -12, "c": 1.5e3, "d": [true, false, null], "e": {}, "f": [], "g": 9223372036854775808, "h": 0.25, "i": "\ud800\u0041"}"#
        let value = try JSONValueParser.parse(Array(text.utf8))
        #expect(value["a"] == .string("x\"y\\z/\n\té😀"))
        #expect(value["b"] == .integer(-12))
        #expect(value["c"] == .integer(1500))
        #expect(value["h"] == .double(0.25))
        #expect(value["i"] == .string("\u{FFFD}A"))
        #expect(value["d"] == .array([.bool(true), .bool(false), .null]))
        #expect(value["e"] == .object([:]))
        #expect(value["f"] == .array([]))
        #expect(value["g"] == .double(9_223_372_036_854_775_808))
    }

    @Test func anyStringReadsBackAsJSONEncoderWroteIt() async {
        await propertyCheck(count: 500, input: Gen.uint8(in: 0...0x7F).array(of: 0...70)) { ascii in
            let text = String(decoding: ascii, as: UTF8.self) + "é"
            let written = try #require(try? JSONEncoder().encode([text]))
            #expect((try? JSONValueParser.parse(Array(written))) == .array([.string(text)]))
        }
    }

    @Test func aControlCharacterOrAnEndInsideAStringIsRefusedWhereItIs() {
        for place in 0..<20 {
            var text = Array(#""aaaaaaaaaaaaaaaaaaaa""#.utf8)
            text[place + 1] = 0x0A
            #expect(throws: JSONValueParser.Invalid(offset: place + 1)) { try JSONValueParser.parse(text) }
            #expect(throws: JSONValueParser.Invalid(offset: place + 1)) { try JSONValueParser.parse(Array(text[...place])) }
        }
        // The same after an escape, in the run that follows it.
        for place in 0..<20 {
            var text = Array(#""\naaaaaaaaaaaaaaaaaaaa""#.utf8)
            text[place + 3] = 0x0A
            #expect(throws: JSONValueParser.Invalid(offset: place + 3)) { try JSONValueParser.parse(text) }
            #expect(throws: JSONValueParser.Invalid(offset: place + 3)) { try JSONValueParser.parse(Array(text[...(place + 2)])) }
        }
    }

    @Test func nestedObjectsKeepTheirOwnMembers() throws {
        let text = #"{"a": {"a": 1, "b": {"c": [{"a": 2}, {}]}}, "b": 3, "c": {"d": 4}}"#
        let value = try JSONValueParser.parse(Array(text.utf8), rejectingAmbiguity: true)
        #expect(value["a"]?["a"] == .integer(1))
        #expect(value["a"]?["b"]?["c"] == .array([.object(["a": .integer(2)]), .object([:])]))
        #expect(value["b"] == .integer(3))
        #expect(value["c"] == .object(["d": .integer(4)]))
        // A key repeated in the outer object after a nested one that uses it too.
        let repeated = #"{"a": {"a": 1}, "a": 2}"#
        let error = #expect(throws: JSONValueParser.Invalid.self) {
            try JSONValueParser.parse(Array(repeated.utf8), rejectingAmbiguity: true)
        }
        #expect(error?.ambiguity == .repeatedKey)
        #expect(error?.offset == repeated.utf8.count - 1, "where the repeated member's value ended")
        #expect(try JSONValueParser.parse(Array(repeated.utf8))["a"] == .integer(2), "the last value wins")
    }

    @Test func aCallerMayRefuseWhatReadsButNotAsOneThing() throws {
        for (text, ambiguity) in [
            (#"{"a": 1, "a": 2}"#, JSONValueParser.Ambiguity.repeatedKey),
            (#"["\ud800"]"#, .loneSurrogate), (#"["\udc00\ud800"]"#, .loneSurrogate),
            (#"["\ud800\u0041"]"#, .loneSurrogate), (#"["x\ud83d"]"#, .loneSurrogate),
        ] {
            let error = #expect(throws: JSONValueParser.Invalid.self) {
                try JSONValueParser.parse(Array(text.utf8), rejectingAmbiguity: true)
            }
            #expect(error?.ambiguity == ambiguity, "\(text)")
            // Apple's answers read as ever.
            #expect(throws: Never.self) { try JSONValueParser.parse(Array(text.utf8)) }
        }
        #expect(try JSONValueParser.parse(Array(#"["\ud83d\ude00"]"#.utf8), rejectingAmbiguity: true) == .array([.string("😀")]))
    }

    @Test(arguments: [
        "", "{", "{\"a\":}", "{\"a\" 1}", "[1,]", "[1 2]", "01", "1.", "1e", "-", "\"open", "tru", "nul",
        "{\"a\":1}x", "\"\\x\"", "\"\\u12\"", "\"tab\there\"", "{1:2}", "-01", "1.5e", "1e400",
    ])
    func refusesWhatIsNotJSON(_ text: String) {
        #expect(throws: JSONValueParser.Invalid.self) { try JSONValueParser.parse(Array(text.utf8)) }
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONValueParser.Invalid.self) { try JSONValueParser.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? JSONValueParser.parse(Array(fine.utf8))) != nil)
    }
}

/// The oracle the parser is checked against: JSONDecoder reading a JSONValue
/// by trying each case in turn (what production did before the parser).
extension JSONValue: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(JSONObject(try container.decode([String: JSONValue].self)))
        }
    }
}
