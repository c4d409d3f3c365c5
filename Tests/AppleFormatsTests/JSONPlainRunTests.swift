import Foundation
import PropertyBased
import Testing

@testable import AppleFormats

@Suite("JSONPlainRun: eight bytes at a time, the same answer as one at a time")
struct JSONPlainRunTests {
    /// The byte-at-a-time reading of the same question.
    static func expectedEnd(_ bytes: [UInt8], from start: Int, escapingSlash: Bool) -> Int {
        bytes[start...].firstIndex {
            $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || (escapingSlash && $0 == UInt8(ascii: "/"))
        } ?? bytes.count
    }

    /// Bytes the word tests must tell apart: the ones that end a run, their neighbours, and UTF-8 beyond ASCII.
    static let awkward: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x2E, 0x2F, 0x30, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0x9F, 0xA2, 0xDC, 0xFF]

    @Test func anyBytesFromAnyStartEndWhereOneAtATimeWould() async {
        let byte = Gen.int(in: 0...(Self.awkward.count + 2)).map { $0 < Self.awkward.count ? Self.awkward[$0] : UInt8(ascii: "Q") }
        await propertyCheck(count: 2_000, input: byte.array(of: 0...70), Gen.int(in: 0...70)) { bytes, offset in
            let start = min(offset, bytes.count)
            bytes.withUnsafeBufferPointer { buffer in
                #expect(JSONPlainRun.endForReading(buffer, from: start) == Self.expectedEnd(bytes, from: start, escapingSlash: false))
                #expect(JSONPlainRun.endForWriting(buffer, from: start) == Self.expectedEnd(bytes, from: start, escapingSlash: true))
            }
        }
    }

    @Test func eachEndingByteIsFoundAtEveryPlaceInALongRun() {
        for ending: UInt8 in [0x00, 0x1F, UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/")] {
            for place in 0..<40 {
                var bytes = Array(repeating: UInt8(ascii: "A"), count: 40)
                bytes[place] = ending
                let forWriting = bytes.withUnsafeBufferPointer { JSONPlainRun.endForWriting($0, from: 0) }
                let forReading = bytes.withUnsafeBufferPointer { JSONPlainRun.endForReading($0, from: 0) }
                #expect(forWriting == place)
                #expect(forReading == (ending == UInt8(ascii: "/") ? 40 : place))
            }
        }
    }

    /// Eight bytes as one little-endian word, the first byte lowest.
    static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    @Test func aWordOfBytesThatEndNoRunRaisesNoFlag() async {
        let plain: [UInt8] = [0x20, 0x21, 0x23, 0x2E, 0x30, 0x41, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xAF, 0xDC, 0xFF]
        await propertyCheck(count: 1_000, input: Gen.int(in: 0...(plain.count - 1)).array(of: 8)) { picks in
            let word = Self.word(picks.map { plain[$0] })
            #expect(JSONPlainRun.endFlags(word, escapingSlash: false) == 0)
            #expect(JSONPlainRun.endFlags(word, escapingSlash: true) == 0)
        }
    }

    @Test func theLowestFlagIsTheFirstByteThatEndsTheRun() async {
        let byte = Gen.int(in: 0...(Self.awkward.count - 1)).map { Self.awkward[$0] }
        await propertyCheck(count: 2_000, input: byte.array(of: 8)) { bytes in
            for escapingSlash in [false, true] {
                let flags = JSONPlainRun.endFlags(Self.word(bytes), escapingSlash: escapingSlash)
                let expected = Self.expectedEnd(bytes, from: 0, escapingSlash: escapingSlash)
                #expect((flags == 0 ? 8 : flags.trailingZeroBitCount / 8) == expected, "\(bytes)")
            }
        }
    }

    @Test func anEmptyBufferOrAStartAtTheEndHasNoRunLeft() {
        #expect(JSONPlainRun.endForReading(UnsafeBufferPointer(start: nil, count: 0), from: 0) == 0)
        let bytes = Array("abc".utf8)
        #expect(bytes.withUnsafeBufferPointer { JSONPlainRun.endForWriting($0, from: 3) } == 3)
    }
}
