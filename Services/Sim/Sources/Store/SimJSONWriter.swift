import AppleFormats
import Foundation

/// Writes the simulator's JSON: `[String: Any]` trees of strings, integers,
/// booleans, `NSNull`, arrays and objects, as its answers and notifications
/// build them.
///
/// JSONSerialization bridged every value to a Foundation object and wrote
/// strings a character at a time: close to half of the simulator's CPU when
/// the benchmark drove it. This writes the bytes directly, strings escaped by
/// `JSONWriter` as JSONSerialization escapes them, so the output is the same JSON.
enum SimJSONWriter {
    static func data(_ object: [String: Any]) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(2_048)
        write(object, to: &out)
        return Data(out)
    }

    static func write(_ value: Any, to out: inout [UInt8]) {
        switch value {
        case let string as String:
            writeString(string, to: &out)
        case let bool as Bool:
            out.append(contentsOf: bool ? "true".utf8 : "false".utf8)
        case let int as Int:
            out.append(contentsOf: String(int).utf8)
        case let int as Int64:
            out.append(contentsOf: String(int).utf8)
        case let int as Int32:
            out.append(contentsOf: String(int).utf8)
        case let double as Double where double.isFinite:
            out.append(contentsOf: String(describing: double).utf8)
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(member, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let objects as [[String: Any]]:
            writeArray(objects, to: &out)
        case let strings as [String]:
            writeArray(strings, to: &out)
        case let array as [Any]:
            writeArray(array, to: &out)
        case is NSNull:
            out.append(contentsOf: "null".utf8)
        case let number as NSNumber:
            out.append(contentsOf: number.description.utf8)
        default:
            // Only the types above are ever put in; anything else is a bug in the caller.
            assertionFailure("SimJSONWriter: cannot write \(type(of: value))")
            out.append(contentsOf: "null".utf8)
        }
    }

    private static func writeArray<Element>(_ array: [Element], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, element) in array.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(element, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private static func writeString(_ string: String, to out: inout [UInt8]) {
        JSONWriter.appendString(string, to: &out)
    }
}
