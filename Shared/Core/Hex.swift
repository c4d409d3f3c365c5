/// Lower-case hexadecimal of bytes (digests that name receipts in logs, and
/// ids). A table lookup: `String(format: "%02x")` per byte went through
/// Foundation's formatter and was a tenth of a verifier's CPU.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
