/// Whether bytes are all of base64's alphabet (`A-Z`, `a-z`, `0-9`, `+`,
/// `/`), checked eight at a time: every receipt the gateway takes is checked
/// whole on its fast path (`ReceiptDataNormalizer.isCanonical`), and a
/// receipt reaches tens of kilobytes for an app with years of renewals.
/// Byte by byte the check cost about 8 instructions a byte under callgrind.
///
/// For a word whose bytes are all below 0x80, adding `0x80 - c` to each byte
/// sets its high bit exactly when the byte is at least `c`, and never
/// carries into the next byte (at most 0x7F + 0x7F). A byte is in a range
/// when it is at least the range's start and not at least one past its end.
enum Base64AlphabetScan {
    static func holdsOnlyAlphabet(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            guard word & highBits == 0 else { return false }
            let inAlphabet =
                inRange(word, UInt8(ascii: "A"), UInt8(ascii: "Z")) | inRange(word, UInt8(ascii: "a"), UInt8(ascii: "z"))
                // `/` (0x2F) sits just below the digits.
                | inRange(word, UInt8(ascii: "/"), UInt8(ascii: "9")) | inRange(word, UInt8(ascii: "+"), UInt8(ascii: "+"))
            guard inAlphabet == highBits else { return false }
            index += 8
        }
        return bytes[index...].allSatisfy(isInAlphabet)
    }

    static func isInAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }

    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// High bits set where a byte of `word` (every byte below 0x80) is in `low...high`.
    @inline(__always)
    private static func inRange(_ word: UInt64, _ low: UInt8, _ high: UInt8) -> UInt64 {
        atLeast(word, low) & ~atLeast(word, high + 1)
    }

    @inline(__always)
    private static func atLeast(_ word: UInt64, _ limit: UInt8) -> UInt64 {
        (word &+ 0x0101_0101_0101_0101 &* UInt64(0x80 - limit)) & highBits
    }
}
