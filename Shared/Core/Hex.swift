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
                for (index, byte) in raw.enumerated() { write(byte, into: text, at: 2 * index) }
                return raw.count * 2
            }
        }
    }

    /// A UUID as `uuid.uuidString.lowercased()` spells it (8-4-4-4-12 lower-case hex digits).
    /// Foundation formats `uuidString` with `snprintf`: about 7,000 instructions for each id the
    /// gateway gives a request.
    public static func lowercase(_ uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    write(byte, into: text, at: position)
                    position += 2
                }
                return position
            }
        }
    }

    /// A byte's two digits at `position` and the one after.
    private static func write(_ byte: UInt8, into text: UnsafeMutableBufferPointer<UInt8>, at position: Int) {
        text[position] = digits[Int(byte >> 4)]
        text[position + 1] = digits[Int(byte & 0x0f)]
    }
}
