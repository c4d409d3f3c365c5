import Contracts
import Foundation
import SwiftProtobuf
import Synchronization

/// Turns ledger events into the lines `events tail` prints: the contract's
/// JSON with its snake_case field names, one object a line; filtered by
/// topic prefix, up to an optional count.
final class EventLineFilter: Sendable {
    struct Done: Error {}

    private let topicPrefix: String?
    private let limit: Int?
    private let printed = Mutex(0)

    init(topicPrefix: String?, limit: Int?) {
        self.topicPrefix = topicPrefix
        self.limit = limit
    }

    /// The line for `event`, or nil when the filter leaves it out.
    func line(for event: LedgerEvent) throws -> String? {
        if let topicPrefix, !event.topic.hasPrefix(topicPrefix) { return nil }
        if isDone { return nil }
        var options = JSONEncodingOptions()
        options.preserveProtoFieldNames = true
        let line = Self.withIntegerMilliseconds(try event.jsonString(options: options))
        printed.withLock { $0 += 1 }
        return line
    }

    /// Protobuf's JSON writes 64-bit integers as strings and enums by their
    /// proto names; the contract's timestamps and seq are integers, its
    /// environments `Production`/`Sandbox` and its states `active`, ...
    /// everywhere else, so they are here too.
    static func withIntegerMilliseconds(_ json: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
            let data = try? JSONSerialization.data(withJSONObject: convert(object), options: [.sortedKeys])
        else { return json }
        return String(decoding: data, as: UTF8.self)
    }

    private static func convert(_ value: Any, key: String = "") -> Any {
        switch value {
        case let object as [String: Any]:
            return object.reduce(into: [String: Any]()) { $0[$1.key] = convert($1.value, key: $1.key) }
        case let array as [Any]:
            return array.map { convert($0, key: key) }
        case let text as String where key == "seq" || key.hasSuffix("_ms"):
            return Int64(text).map { NSNumber(value: $0) } ?? text
        case let text as String where key == "environment":
            return ["APPLE_ENVIRONMENT_PRODUCTION": "Production", "APPLE_ENVIRONMENT_SANDBOX": "Sandbox"][text] ?? text
        case let text as String where key == "state" && text.hasPrefix("ENTITLEMENT_STATE_"):
            return text.dropFirst("ENTITLEMENT_STATE_".count).lowercased()
        default:
            return value
        }
    }

    var isDone: Bool { limit.map { limit in printed.withLock { $0 >= limit } } ?? false }
}
