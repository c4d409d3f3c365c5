/// JSON text written straight into bytes, for the few fixed shapes on the hot
/// path: the gateway's answer to every receipt and the verifier's body to
/// Apple. Foundation's JSONEncoder costs more than the rest of the gateway's
/// answer (a boxed container per value, dynamic casts per field, and a key
/// sort): about 90,000 instructions per answer, against a few thousand here.
///
/// The caller writes keys in the order it wants them (the gateway's in sorted
/// order, as its answers always were); commas come by themselves. Strings
/// are escaped as JSONEncoder escapes them, `/` included, so the bytes match
/// what it wrote.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Whether the next key or value follows another in the same object or array.
    private var afterValue = false

    public init(capacity: Int = 1_024) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        afterValue = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        afterValue = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// A key of the program's own: plain ASCII that needs no escaping.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    public mutating func string(_ value: String) {
        separate()
        Self.appendString(value, to: &bytes)
        afterValue = true
    }

    /// Inlinable so that callers in other modules get it specialized for their integer type:
    /// a generic `String(value)` there went through the standard library's unspecialized
    /// `description` (about 850 instructions a number).
    @inlinable
    public mutating func integer(_ value: some BinaryInteger) {
        if let value = Int64(exactly: value) { writeInteger(value) } else { writeNumber(String(value)) }
    }

    @usableFromInline
    mutating func writeInteger(_ value: Int64) {
        separate()
        Self.appendDecimal(value, to: &bytes)
        afterValue = true
    }

    /// An integer past Int64 (a UInt64 over its half), in its own digits.
    @usableFromInline
    mutating func writeNumber(_ digits: String) {
        separate()
        bytes.append(contentsOf: digits.utf8)
        afterValue = true
    }

    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        // Int64's largest magnitude has 19 digits.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        afterValue = true
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: Self.nullBytes)
        afterValue = true
    }

    /// The array of strings written whole.
    public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    // A key and its value together: most of an object is written this way.

    public mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    @inlinable
    public mutating func field(_ name: StaticString, _ value: some BinaryInteger) {
        key(name)
        integer(value)
    }

    public mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    public mutating func field(_ name: StaticString, _ values: [String]) {
        key(name)
        strings(values)
    }

    /// The key always, its value `null` when there is none.
    public mutating func field(_ name: StaticString, orNull value: Int64?) {
        key(name)
        if let value { integer(value) } else { null() }
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    /// A string quoted and escaped as JSONEncoder and JSONSerialization escape it, `/` included
    /// (as Apple does too). Runs that need no escaping are copied whole.
    public static func appendString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { text in
            var runStart = 0
            while true {
                let index = JSONPlainRun.endForWriting(text, from: runStart)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index]))
                guard index < text.count else { break }
                let byte = text[index]
                runStart = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
                default:
                    out.append(contentsOf: "u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0x0F)])
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
