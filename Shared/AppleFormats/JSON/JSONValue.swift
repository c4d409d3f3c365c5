import Foundation

/// A JSON value as Apple sends it, with the lenient readings Apple's history
/// demands: the same field has come as a string, an integer or a boolean
/// depending on the year, the endpoint and the receipt style.
/// Read from bytes by `JSONValueParser`.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var object: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// An array as is, a single object as a one-element array (iOS 6 answers
    /// put one object where iOS 7 answers put an array).
    public var objects: [JSONValue] {
        switch self {
        case .array(let items): items.filter { $0.object != nil }
        case .object: [self]
        default: []
        }
    }

    /// Text of a string or a number (ids come as both); nil for empty strings.
    public var text: String? {
        switch self {
        case .string(let value): value.isEmpty ? nil : value
        case .integer(let value): String(value)
        case .double(let value) where value == value.rounded() && abs(value) < 9.0e15: String(Int64(value))
        default: nil
        }
    }

    /// An integer from a number or a decimal string ("1394619485000").
    public var int64: Int64? {
        switch self {
        case .integer(let value): value
        case .double(let value) where value == value.rounded() && abs(value) < 9.0e18: Int64(value)
        // Apple's numbers come clean; trimming (Foundation, slow) only when they do not.
        case .string(let value): Int64(value) ?? Int64(value.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    /// A boolean from `true`/`false`, `"true"`/`"false"`, `1`/`0` or `"1"`/`"0"`.
    public var bool: Bool? {
        switch self {
        case .bool(let value): value
        case .integer(let value) where value == 0 || value == 1: value == 1
        case .string(let value):
            // The exact spellings first: lower-casing every value was a measurable cost.
            switch value {
            case "true", "1": true
            case "false", "0": false
            default:
                switch value.lowercased() {
                case "true": true
                case "false": false
                default: nil
                }
            }
        default: nil
        }
    }
}
