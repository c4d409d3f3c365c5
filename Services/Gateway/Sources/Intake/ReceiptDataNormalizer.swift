import Foundation

/// Repairs the ways clients damage a base64 receipt on its way to us, then
/// insists on strict, canonical base64 (spec: POST /v1/receipts):
/// - percent-encoding (when the text holds `%XX` escapes: a receipt never holds `%`);
/// - a `data:...;base64,` URL prefix;
/// - `+` turned into a space by form decoding (a receipt never holds a space,
///   so every space inside it was a `+`); whitespace around it is trimmed
///   first, where that cannot corrupt a receipt (`ReceiptEnds`);
/// - line breaks and tabs (`NSDataBase64EncodingEndLineWithLineFeed`), removed;
/// - base64url (`-`, `_`) and missing `=` padding.
/// Works on UTF-8 bytes: receipts reach a megabyte.
enum ReceiptDataNormalizer {
    static func normalize(_ raw: String) throws(IntakeError) -> String {
        if isCanonical(raw) { return raw }
        var bytes = Array(raw.utf8)
        if bytes.contains(UInt8(ascii: "%")) { bytes = try percentDecoded(bytes) }
        bytes = withoutDataURLPrefix(Array(bytes.drop(while: isWhitespace)))
        let trailing = bytes.reversed().prefix(while: isWhitespace)
        let trailingSpaces = trailing.count { $0 == UInt8(ascii: " ") }
        var cleaned: [UInt8] = []
        cleaned.reserveCapacity(bytes.count + 3)
        for byte in bytes.dropLast(trailing.count) {
            switch byte {
            case UInt8(ascii: " "): cleaned.append(UInt8(ascii: "+"))
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), 0x0B, 0x0C: continue
            case UInt8(ascii: "-"): cleaned.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): cleaned.append(UInt8(ascii: "/"))
            default: cleaned.append(byte)
            }
        }
        let padded = cleaned.last == UInt8(ascii: "=")
        while cleaned.last == UInt8(ascii: "=") { cleaned.removeLast() }
        if !padded { cleaned += ReceiptEnds.restoredPluses(after: cleaned, trailingSpaces: trailingSpaces) }
        guard !cleaned.isEmpty else { throw .badEncoding("receipt_data is empty") }
        guard cleaned.allSatisfy(Base64AlphabetScan.isInAlphabet) else {
            throw .badEncoding("receipt_data is not base64")
        }
        guard cleaned.count % 4 != 1 else { throw .badEncoding("receipt_data has a truncated base64 length") }
        // Canonical: unused trailing bits are zero, so the receipt has exactly one spelling.
        guard hasCanonicalEnd(cleaned) else { throw .badEncoding("receipt_data is not canonical base64") }
        cleaned += Array(repeating: UInt8(ascii: "="), count: (4 - cleaned.count % 4) % 4)
        return String(decoding: cleaned, as: UTF8.self)
    }

    /// Already strict, canonical, padded base64, as almost every client sends it: one pass over
    /// the text instead of the repair's copies (about 27,000 instructions of the gateway's
    /// 540,000 per verification under callgrind). Anything else takes the repair.
    static func isCanonical(_ raw: String) -> Bool {
        var raw = raw
        return raw.withUTF8 { bytes in
            guard !bytes.isEmpty, bytes.count % 4 == 0 else { return false }
            let padding = bytes[bytes.count - 1] != UInt8(ascii: "=") ? 0 : bytes[bytes.count - 2] != UInt8(ascii: "=") ? 1 : 2
            let unpadded = UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - padding)])
            return Base64AlphabetScan.holdsOnlyAlphabet(unpadded) && hasCanonicalEnd(unpadded)
        }
    }

    /// Whether the bits that padding leaves unused in the last character are zero, for
    /// unpadded base64 of whole characters: the only way valid base64 has a second spelling.
    /// (It replaces decoding the receipt and encoding it again to compare, three passes over
    /// a receipt that can reach a megabyte.)
    static func hasCanonicalEnd(_ unpadded: some RandomAccessCollection<UInt8>) -> Bool {
        guard let last = unpadded.last.flatMap(sextet) else { return false }
        switch unpadded.count % 4 {
        case 2: return last & 0x0F == 0  // "==": 4 of the last character's 6 bits unused
        case 3: return last & 0x03 == 0  // "=": 2 unused
        default: return true
        }
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), 0x0B, 0x0C: true
        default: false
        }
    }

    static func percentDecoded(_ bytes: [UInt8]) throws(IntakeError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { throw .badEncoding("receipt_data has a broken percent escape") }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func withoutDataURLPrefix(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.starts(with: Array("data:".utf8)), let comma = bytes.firstIndex(of: UInt8(ascii: ",")),
            comma < 256
        else { return bytes }
        return Array(bytes[(comma + 1)...])
    }
}
