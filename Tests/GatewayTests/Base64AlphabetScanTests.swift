import PropertyBased
import Testing

@testable import Gateway

@Suite("Base64AlphabetScan: eight bytes at a time, the same answer as one at a time")
struct Base64AlphabetScanTests {
    /// The alphabet's edges and their neighbours on both sides, and bytes of 0x80 and above.
    static let awkward: [UInt8] = [
        0x00, 0x2A, 0x2B, 0x2C, 0x2E, 0x2F, 0x30, 0x39, 0x3A, 0x3D, 0x40, 0x41, 0x5A, 0x5B, 0x60, 0x61, 0x7A, 0x7B,
        0x7F, 0x80, 0xAB, 0xC1, 0xFF,
    ]

    static func holdsOnlyAlphabet(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer(Base64AlphabetScan.holdsOnlyAlphabet)
    }

    @Test func anyBytesAreJudgedAsOneAtATimeJudgesThem() async {
        // Mostly the alphabet, so that whole words of it come up, with an awkward byte now and then.
        let byte = Gen.int(in: 0...(Self.awkward.count * 4)).map { pick in
            pick < Self.awkward.count ? Self.awkward[pick] : UInt8(ascii: "a") + UInt8(pick % 26)
        }
        await propertyCheck(count: 2_000, input: byte.array(of: 0...40)) { bytes in
            #expect(Self.holdsOnlyAlphabet(bytes) == bytes.allSatisfy(Base64AlphabetScan.isInAlphabet))
        }
    }

    @Test func eachByteOutsideTheAlphabetIsFoundAtEveryPlace() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        #expect(Self.holdsOnlyAlphabet(alphabet))
        for byte in UInt8.min...UInt8.max where !alphabet.contains(byte) {
            for place in [0, 7, 8, 20, 63] {
                var bytes = alphabet
                bytes[place] = byte
                #expect(!Self.holdsOnlyAlphabet(bytes), "\(byte) at \(place)")
            }
        }
        #expect(Self.holdsOnlyAlphabet([]))
    }
}
