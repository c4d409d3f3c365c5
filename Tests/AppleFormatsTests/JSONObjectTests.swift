import PropertyBased
import Testing

@testable import AppleFormats

@Suite struct JSONObjectTests {
    @Test func findsKeysOfTheSameLengthByTheirBytes() {
        let object: JSONObject = ["product_id": .string("p"), "purchase_x": .integer(1), "quantity": .integer(2)]
        #expect(object["purchase_x"] == .integer(1))
        #expect(object["product_id"] == .string("p"))
        #expect(object["product_iD"] == nil)
        #expect(object["quantity_"] == nil)
        #expect(object.keys == ["product_id", "purchase_x", "quantity"])
    }

    @Test func settingReplacesRemovesOrAppends() {
        var object: JSONObject = ["a": .integer(1), "b": .integer(2)]
        object["a"] = .integer(3)
        object["c"] = .null
        object["b"] = nil
        object["missing"] = nil
        #expect(object.keys == ["a", "c"])
        #expect(object["a"] == .integer(3))
        #expect(object["c"] == .null)
    }

    @Test func equalityIgnoresOrderButNotValuesOrKeys() {
        let object: JSONObject = ["a": .integer(1), "b": .string("x")]
        #expect(object == ["b": .string("x"), "a": .integer(1)])
        #expect(object != ["a": .integer(1), "b": .string("y")])
        #expect(object != ["a": .integer(1)])
        #expect(object != ["a": .integer(1), "c": .string("x")])
        #expect(JSONObject(["a": .integer(1), "b": .string("x")]) == object)
    }

    /// Against a dictionary, for member lists below and above the point where
    /// repeats are found by hashing instead of by comparing keys: keys short
    /// enough to repeat often, of lengths that share a bit of the length mask.
    @Test func uniquingKeepsTheFirstPlaceAndTheLastValueOfEachKey() async {
        let lengths = [1, 2, 65, 66]
        await propertyCheck(
            count: 400, input: Gen.int(in: 0...3).array(of: 0...80), Gen.int(in: 0...5).array(of: 0...80)
        ) { lengthIndices, letters in
            let keys = zip(lengthIndices, letters).map { length, letter in
                String(repeating: ["a", "b", "c", "d", "e", "f"][letter], count: lengths[length])
            }
            let members = keys.enumerated().map { (key: $0.element, value: JSONValue.integer(Int64($0.offset))) }
            let (object, firstRepeat) = JSONObject.uniquing(members)

            var firstPlaces: [String] = []
            var lastValues: [String: JSONValue] = [:]
            var expectedRepeat: Int?
            for (offset, member) in members.enumerated() {
                if lastValues[member.key] == nil {
                    firstPlaces.append(member.key)
                } else if expectedRepeat == nil {
                    expectedRepeat = offset
                }
                lastValues[member.key] = member.value
            }
            #expect(object.keys == firstPlaces)
            #expect(object == JSONObject(lastValues))
            #expect(firstRepeat == expectedRepeat)
        }
    }

    @Test func aRepeatInALargeObjectIsRefusedWhereItsValueEnded() throws {
        let members = (0..<40).map { #""k\#($0)": \#($0)"# } + [#""k7": "again""#, #""k50": 50"#]
        let text = "{" + members.joined(separator: ", ") + "}"
        let error = #expect(throws: JSONValueParser.Invalid.self) {
            try JSONValueParser.parse(Array(text.utf8), rejectingAmbiguity: true)
        }
        #expect(error?.ambiguity == .repeatedKey)
        let repeatEnd = try #require(text.utf8.firstRange(of: #""again""#.utf8)).upperBound
        #expect(error?.offset == text.utf8.distance(from: text.utf8.startIndex, to: repeatEnd))

        let lenient = try JSONValueParser.parse(Array(text.utf8))
        #expect(lenient["k7"] == .string("again"))
        #expect(lenient.object?.keys.count == 41)
        #expect(lenient.object?.keys[7] == "k7", "a repeated key keeps its first place")
    }
}
