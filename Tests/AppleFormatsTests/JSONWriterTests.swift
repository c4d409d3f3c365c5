import AppleFormats
import Foundation
import PropertyBased
import Testing

@Suite("JSONWriter: the bytes JSONEncoder wrote, without its cost")
struct JSONWriterTests {
    /// What Foundation's encoder writes for one string: the reference for escaping.
    static func encoderBytes(_ value: String) throws -> [UInt8] {
        Array(try JSONEncoder().encode(value))
    }

    static func writerBytes(_ value: String) -> [UInt8] {
        var json = JSONWriter()
        json.string(value)
        return json.bytes
    }

    @Test func everyControlCharacterQuoteBackslashAndSlashEscapeAsTheEncoderEscapesThem() throws {
        let awkward = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) } + ["\"", "\\", "/", "\u{7F}", "é", "😀", "a/b\"c\\d"]
        for text in awkward + [awkward.joined(), ""] {
            let expected = try Self.encoderBytes(text)
            #expect(Self.writerBytes(text) == expected, "\(Array(text.utf8))")
        }
    }

    @Test func anyStringComesOutAsTheEncoderWroteIt() async {
        await propertyCheck(count: 500, input: Gen.uint8(in: 0...0x7F).array(of: 0...70)) { ascii in
            let text = String(decoding: ascii, as: UTF8.self) + "ü"
            let expected = try? Self.encoderBytes(text)
            #expect(Self.writerBytes(text) == expected)
        }
    }

    @Test func commasSeparateKeysAndValuesAtEveryDepth() {
        var json = JSONWriter()
        json.beginObject()
        json.key("a")
        json.beginArray()
        json.integer(Int64(-12))
        json.bool(true)
        json.null()
        json.beginObject()
        json.key("b")
        json.string("c")
        json.endObject()
        json.beginArray()
        json.endArray()
        json.endArray()
        json.key("d")
        json.beginObject()
        json.endObject()
        json.key("e")
        json.strings(["x", "y"])
        json.key("f")
        json.integer(UInt64.max)
        json.field("g", orNull: nil)
        json.field("h", orNull: 5)
        json.field("i", "j/k")
        json.field("l", false)
        json.field("m", ["n"])
        json.endObject()
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"a":[-12,true,null,{"b":"c"},[]],"d":{},"e":["x","y"],"f":18446744073709551615,"g":null,"h":5,"i":"j\/k","l":false,"m":["n"]}"#)
        #expect((try? JSONSerialization.jsonObject(with: Data(json.bytes))) != nil)
    }

    /// Integers are written digit by digit, not by `String(_:)`: the same text for every width,
    /// sign and edge, and past Int64 (a UInt64 over its half) still exact.
    @Test func integersComeOutAsTheirDescription() async {
        func written(_ value: some BinaryInteger) -> String {
            var json = JSONWriter()
            json.integer(value)
            return String(decoding: json.bytes, as: UTF8.self)
        }
        for value: Int64 in [0, 1, -1, 9, 10, -10, 99, 100, 1_574_316_980_000, .max, .min, .max - 1, .min + 1] {
            #expect(written(value) == String(value))
        }
        #expect(written(Int32.min) == String(Int32.min))
        #expect(written(UInt8(255)) == "255")
        #expect(written(UInt64(Int64.max) + 1) == "9223372036854775808")
        await propertyCheck(count: 500, input: Gen.int64()) { value in
            #expect(written(value) == String(value))
        }
    }
}
