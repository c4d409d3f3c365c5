/// One cell of a ledger row as the import carries it between SQLite and
/// PostgreSQL, whose types differ (SQLite keeps booleans as 0/1, PostgreSQL
/// as BOOLEAN): both sides are read into these values, and compared and
/// hashed only in this form.
enum ImportValue: Hashable, Sendable {
    case null
    case text(String)
    case integer(Int64)
    case boolean(Bool)
    case bytes([UInt8])

    /// Appends the canonical encoding: a tag byte, then integers as 8 bytes
    /// big-endian, booleans as one byte, text (UTF-8) and bytes after their
    /// length as 8 bytes big-endian. Lengths and tags make it unambiguous, so
    /// two rows encode alike only when every cell is equal.
    func encode(into buffer: inout [UInt8]) {
        switch self {
        case .null:
            buffer.append(0)
        case .text(let text):
            buffer.append(1)
            Self.append(Array(text.utf8), to: &buffer)
        case .integer(let value):
            buffer.append(2)
            Self.append(UInt64(bitPattern: value), to: &buffer)
        case .boolean(let value):
            buffer.append(3)
            buffer.append(value ? 1 : 0)
        case .bytes(let bytes):
            buffer.append(4)
            Self.append(bytes, to: &buffer)
        }
    }

    /// The canonical encoding of a row (or of its key): its cells' encodings in column order.
    static func encode(_ cells: some Sequence<ImportValue>) -> [UInt8] {
        var buffer: [UInt8] = []
        for cell in cells { cell.encode(into: &buffer) }
        return buffer
    }

    private static func append(_ bytes: [UInt8], to buffer: inout [UInt8]) {
        append(UInt64(bytes.count), to: &buffer)
        buffer.append(contentsOf: bytes)
    }

    private static func append(_ value: UInt64, to buffer: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
