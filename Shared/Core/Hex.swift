import Foundation

/// Lower-case hexadecimal of bytes (digests that name receipts in logs, and
/// ids). A table lookup: `String(format: "%02x")` per byte went through
/// Foundation's formatter and was a tenth of a verifier's CPU.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Contiguous bytes, digests included: a digest iterated as a `Sequence` copied
    /// itself per byte, which made hexing a SHA-256 cost 18,000 instructions.
    public static func lowercase(_ bytes: some ContiguousBytes) -> String {
        bytes.withUnsafeBytes { raw in
            String(unsafeUninitializedCapacity: raw.count * 2) { text in
                for (index, byte) in raw.enumerated() {
                    text[2 * index] = digits[Int(byte >> 4)]
                    text[2 * index + 1] = digits[Int(byte & 0x0f)]
                }
                return raw.count * 2
            }
        }
    }
}
