/// Whether spaces at the ends of a receipt were `+` characters that form
/// decoding turned into spaces, or whitespace a client added.
///
/// - At the start: always added. A receipt's base64 never starts with `+`
///   (62: a first byte of 0xF8-0xFB): an App Store receipt is DER, a SEQUENCE
///   (0x30, `M`), and an iOS 6 transaction receipt is a text plist (`{`, `e`).
/// - At the end: added, except where a DER receipt of definite length (Apple's
///   `MII...`) says by its own length header that characters are missing; then
///   as many spaces as are missing were `+`. Any other receipt's base64 cannot
///   end with `+`: a BER receipt of indefinite length (Xcode's `MIA...`) ends
///   with end-of-contents 0x00 (`A`), an iOS 6 receipt with `}` or a newline.
enum ReceiptEnds {
    /// The `+` characters to put back after `body` (base64 without padding),
    /// given the spaces that trailed it.
    static func restoredPluses(after body: [UInt8], trailingSpaces: Int) -> [UInt8] {
        guard trailingSpaces > 0, let length = derLength(body) else { return [] }
        // Unpadded base64 of `length` bytes: 4 characters per 3 bytes, rounded up.
        let expected = (length * 4 + 2) / 3
        let missing = expected - body.count
        guard missing > 0, missing <= trailingSpaces else { return [] }
        return Array(repeating: UInt8(ascii: "+"), count: missing)
    }

    /// The whole length in bytes a definite-length DER SEQUENCE declares in its
    /// header, read from the first base64 characters; nil for anything else.
    static func derLength(_ body: [UInt8]) -> Int? {
        guard let header = decodedPrefix(body, characters: 8), header.count >= 2, header[0] == 0x30 else { return nil }
        let first = Int(header[1])
        if first < 0x80 { return 2 + first }
        let octets = first & 0x7F
        // 0x80 is BER's indefinite length; more than 4 octets is no receipt.
        guard (1...4).contains(octets), header.count >= 2 + octets else { return nil }
        let length = header[2..<(2 + octets)].reduce(0) { $0 << 8 | Int($1) }
        return 2 + octets + length
    }

    /// The whole bytes encoded by (at most) the first `characters` base64 characters.
    private static func decodedPrefix(_ body: [UInt8], characters: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var bits = 0
        var value = 0
        for character in body.prefix(characters) {
            guard let sextet = sextet(character) else { return nil }
            value = value << 6 | sextet
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: value >> bits))
                value &= (1 << bits) - 1
            }
        }
        return bytes
    }

    private static func sextet(_ character: UInt8) -> Int? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(character - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(character - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(character - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
