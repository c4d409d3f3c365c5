/// Where a run of a JSON string's bytes that needs no escaping ends, found
/// eight bytes at a time.
///
/// A receipt travels as a base64 string of kilobytes (tens of kilobytes for
/// an app with years of renewals), and the gateway reads it from its client's
/// JSON, the verifier writes it into its body to Apple and reads it back in
/// Apple's `latest_receipt`. Byte by byte, with an array's bounds check,
/// each of those passes cost about 10 instructions a byte under callgrind;
/// eight at a time, about 3. (Swift's `SIMD16<UInt8>` comparisons were
/// measured at 45 a byte here: its generic lane loops did not vectorize.)
///
/// Each test below is the classic "does this word hold a byte that..." bit
/// trick. A borrow starts only at a byte that matches, so a flag can be
/// wrong only above a byte that truly matches, and bytes of 0x80 and above
/// (UTF-8 beyond ASCII) never set one: the lowest flag is the first byte
/// that ends the run.
public enum JSONPlainRun {
    /// The first index from `start` whose byte ends a plain run when reading
    /// JSON: `"`, `\` or a control character (which a string may not hold);
    /// `bytes.count` when there is none.
    public static func endForReading(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        end(bytes, from: start, escapingSlash: false)
    }

    /// The first index from `start` whose byte must be escaped when writing
    /// JSON as JSONEncoder writes it: `"`, `\`, `/` or a control character;
    /// `bytes.count` when there is none.
    public static func endForWriting(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        end(bytes, from: start, escapingSlash: true)
    }

    @inline(__always)
    private static func end(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, escapingSlash: Bool) -> Int {
        precondition(start >= 0 && start <= bytes.count, "start out of the buffer")
        guard let base = bytes.baseAddress else { return bytes.count }
        let raw = UnsafeRawPointer(base)
        var index = start
        while index + 8 <= bytes.count {
            // Little-endian, whatever the machine: the first byte is the lowest.
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let flags = endFlags(word, escapingSlash: escapingSlash)
            if flags != 0 { return index + flags.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < bytes.count, !ends(bytes[index], escapingSlash: escapingSlash) { index += 1 }
        return index
    }

    /// The high bit of each byte of `word` that may end a run (bytes in
    /// memory order from the lowest); the lowest one set surely does.
    @inline(__always)
    static func endFlags(_ word: UInt64, escapingSlash: Bool) -> UInt64 {
        var flags = below(word, 0x20) | zeroByte(word ^ broadcast(0x22)) | zeroByte(word ^ broadcast(0x5C))
        if escapingSlash { flags |= zeroByte(word ^ broadcast(0x2F)) }
        return flags
    }

    @inline(__always)
    private static func ends(_ byte: UInt8, escapingSlash: Bool) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
            || (escapingSlash && byte == UInt8(ascii: "/"))
    }

    private static let lowBits: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    @inline(__always)
    private static func broadcast(_ byte: UInt8) -> UInt64 { lowBits &* UInt64(byte) }

    /// The high bit of each byte of `word` that may be zero.
    @inline(__always)
    private static func zeroByte(_ word: UInt64) -> UInt64 { (word &- lowBits) & ~word & highBits }

    /// The high bit of each byte of `word` that may be below `limit` (at most 0x80).
    @inline(__always)
    private static func below(_ word: UInt64, _ limit: UInt8) -> UInt64 { (word &- broadcast(limit)) & ~word & highBits }
}
