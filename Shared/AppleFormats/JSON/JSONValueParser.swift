/// Reads JSON text (RFC 8259) into a `JSONValue` in one pass over the bytes.
///
/// Why not JSONDecoder: decoding the recursive `JSONValue` through Decodable
/// tries each case in turn and builds an error per miss; profiling the stack
/// under load put that at 44 % of a verifier's CPU. This reads each value once.
/// Hostile input is bounded: nesting deeper than `maximumDepth` is refused
/// (no stack exhaustion), and the answer's size is capped before it gets here.
public struct JSONValueParser {
    public struct Invalid: Error, Equatable {
        public let offset: Int
        /// Set when the text is JSON but ambiguous, and the caller refused that.
        public var ambiguity: Ambiguity?
    }

    /// JSON that reads, but not as one thing: refused in a client's request, taken in Apple's answers.
    public enum Ambiguity: Equatable, Sendable {
        /// An object names a key twice (otherwise the last value wins).
        case repeatedKey
        /// A `\uD800`-`\uDFFF` escape without its other half (otherwise U+FFFD, so
        /// that strings which differ read alike).
        case loneSurrogate
    }

    public static let maximumDepth = 128

    private let bytes: [UInt8]
    private var index = 0
    private var rejectingAmbiguity = false
    /// Members of the objects being read, innermost last, with where each value ended.
    private var pendingMembers: [(key: String, value: JSONValue, end: Int)] = []

    /// - Parameter rejectingAmbiguity: refuse text that reads but not as one
    ///   thing (`Ambiguity`), as a client's request must be. Without it, the
    ///   reading Apple's answers get.
    public static func parse(_ bytes: [UInt8], rejectingAmbiguity: Bool = false) throws(Invalid) -> JSONValue {
        var parser = JSONValueParser(bytes: bytes)
        parser.rejectingAmbiguity = rejectingAmbiguity
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw Invalid(offset: parser.index) }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var invalid: Invalid { Invalid(offset: index) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Invalid) -> JSONValue {
        guard depth < Self.maximumDepth else { throw invalid }
        skipWhitespace()
        guard index < bytes.count else { throw invalid }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    private mutating func literal(_ text: StaticString, _ value: JSONValue) throws(Invalid) -> JSONValue {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw invalid }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { throw invalid }
        index += count
        return value
    }

    private mutating func object(depth: Int) throws(Invalid) -> JSONValue {
        index += 1  // {
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        // The members wait on `pendingMembers` (nested objects above them) until the
        // object is read, so its member list is made once, at its size (made large up
        // front, a hostile `[{},{},...]` could reserve far more memory than its bytes).
        let first = pendingMembers.count
        defer { pendingMembers.removeSubrange(first...) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw invalid }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw invalid }
            index += 1
            let member = try value(depth: depth + 1)
            pendingMembers.append((key, member, index))
            skipWhitespace()
            guard index < bytes.count else { throw invalid }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                break
            } else {
                throw invalid
            }
        }
        let read = pendingMembers[first...]
        let (object, firstRepeat) = JSONObject.uniquing(read.lazy.map { (key: $0.key, value: $0.value) })
        if let firstRepeat, rejectingAmbiguity {
            throw Invalid(offset: read[first + firstRepeat].end, ambiguity: .repeatedKey)
        }
        return .object(object)
    }

    private mutating func array(depth: Int) throws(Invalid) -> JSONValue {
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw invalid }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw invalid
            }
        }
    }

    private mutating func string() throws(Invalid) -> String {
        index += 1  // opening quote
        let start = index
        // The common case, no escapes: the bytes straight into the string.
        try skipPlainRun()
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: bytes[start..<index - 1], as: UTF8.self)
        }
        var utf8 = Array(bytes[start..<index])
        while bytes[index] == UInt8(ascii: "\\") {
            index += 1
            guard index < bytes.count else { throw invalid }
            switch bytes[index] {
            case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"): utf8 += try unicodeEscape()
            default: throw invalid
            }
            index += 1
            let run = index
            try skipPlainRun()
            utf8 += bytes[run..<index]
        }
        index += 1  // closing quote
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Moves index over a string's bytes up to its next `"` or `\`; throws
    /// at a control character or the end of the text.
    private mutating func skipPlainRun() throws(Invalid) {
        index = bytes.withUnsafeBufferPointer { JSONPlainRun.endForReading($0, from: index) }
        guard index < bytes.count, bytes[index] >= 0x20 else { throw invalid }
    }

    /// `\uXXXX` (index on the `u`), a surrogate pair as one scalar; its UTF-8. Leaves index on the last hex digit.
    private mutating func unicodeEscape() throws(Invalid) -> [UInt8] {
        var scalar = try hex4()
        // A high surrogate joins the low one right after it; any surrogate left alone is ambiguous.
        if (0xD800..<0xDC00).contains(scalar), index + 6 < bytes.count, bytes[index + 1] == UInt8(ascii: "\\"),
            bytes[index + 2] == UInt8(ascii: "u")
        {
            let resume = index
            index += 2
            let low = try hex4()
            if (0xDC00..<0xE000).contains(low) {
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else {
                index = resume  // not a pair: the next escape is read on its own
            }
        }
        guard let character = Unicode.Scalar(scalar) else {
            if rejectingAmbiguity { throw Invalid(offset: index, ambiguity: .loneSurrogate) }
            return Array("\u{FFFD}".utf8)
        }
        return Array(String(Character(character)).utf8)
    }

    private mutating func hex4() throws(Invalid) -> UInt32 {
        guard index + 4 < bytes.count else { throw invalid }
        var value: UInt32 = 0
        for _ in 0..<4 {
            index += 1
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw invalid
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// `-? int frac? exp?`: an integer when its value is one that fits Int64, else a finite double.
    private mutating func number() throws(Invalid) -> JSONValue {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        let integerDigits = index - integerStart
        guard integerDigits > 0, !(integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0")) else { throw invalid }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let fractionStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > fractionStart else { throw invalid }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > exponentStart else { throw invalid }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else { throw invalid }
        // As JSONDecoder reads them: 1.0 and 1.5e3 are integers when exactly so.
        if let integer = Int64(exactly: double) { return .integer(integer) }
        return .double(double)
    }
}
