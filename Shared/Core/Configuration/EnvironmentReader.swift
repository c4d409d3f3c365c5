import Foundation

/// Reads `STOREKEEPER_*` settings from a dictionary (the process environment
/// in production, a literal in tests) and validates each one, so a bad value
/// stops the process at start-up with a message naming the variable.
///
/// An empty value counts as unset: `STOREKEEPER_API_KEYS=` turns keys off.
public struct EnvironmentReader: Sendable {
    public let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    /// The trimmed value, or nil when unset or empty.
    public func raw(_ variable: ConfigurationVariable) -> String? {
        guard let value = values[variable.rawValue]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty
        else { return nil }
        return value
    }

    /// The value, or the variable's default (every caller of this has one).
    public func string(_ variable: ConfigurationVariable) -> String {
        guard let value = raw(variable) ?? variable.defaultValue else {
            preconditionFailure("\(variable.rawValue) has no default")
        }
        return value
    }

    /// A comma separated list; blank items are dropped, duplicates kept once in order.
    public func list(_ variable: ConfigurationVariable) -> [String] {
        guard let value = raw(variable) else { return [] }
        var seen = Set<String>()
        return value.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    public func secret(_ variable: ConfigurationVariable) -> Secret? {
        raw(variable).map(Secret.init)
    }

    public func secrets(_ variable: ConfigurationVariable) -> [Secret] {
        list(variable).map(Secret.init)
    }

    public func integer(_ variable: ConfigurationVariable, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        let text = string(variable)
        guard let value = Int(text) else {
            throw ConfigurationError(variable: variable.rawValue, reason: "expected an integer, got '\(text)'")
        }
        guard range.contains(value) else {
            throw ConfigurationError(
                variable: variable.rawValue,
                reason: "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }

    /// A duration written in milliseconds.
    public func milliseconds(
        _ variable: ConfigurationVariable, in range: ClosedRange<Int>
    ) throws(ConfigurationError) -> Duration {
        .milliseconds(try integer(variable, in: range))
    }

    /// One of a closed set of words, e.g. `transfer` or `keep`; case does not matter.
    public func choice<T: RawRepresentable & CaseIterable>(
        _ variable: ConfigurationVariable, as type: T.Type = T.self
    ) throws(ConfigurationError) -> T where T.RawValue == String {
        let text = string(variable)
        guard let value = T(rawValue: text.lowercased()) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(variable: variable.rawValue, reason: "expected one of \(allowed), got '\(text)'")
        }
        return value
    }

    /// `true` or `false` (also `1`/`0`, `yes`/`no`; case does not matter).
    public func boolean(_ variable: ConfigurationVariable) throws(ConfigurationError) -> Bool {
        let text = string(variable)
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw ConfigurationError(variable: variable.rawValue, reason: "expected true or false, got '\(text)'")
        }
    }

    /// An http or https URL with a host; nil when unset and without default.
    public func httpURL(_ variable: ConfigurationVariable) throws(ConfigurationError) -> String? {
        guard let text = raw(variable) ?? variable.defaultValue else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw ConfigurationError(variable: variable.rawValue, reason: "expected an http(s) URL, got '\(text)'")
        }
        return text
    }

    /// A `host:port` address; nil when unset and without default.
    public func socketAddress(_ variable: ConfigurationVariable) throws(ConfigurationError) -> SocketAddress? {
        guard let text = raw(variable) ?? variable.defaultValue else { return nil }
        guard let address = SocketAddress(text) else {
            throw ConfigurationError(
                variable: variable.rawValue, reason: "expected host:port with a port up to 65535, got '\(text)'")
        }
        return address
    }

    /// A comma list of ZeroMQ endpoints (at least one).
    public func zmqEndpoints(_ variable: ConfigurationVariable) throws(ConfigurationError) -> [String] {
        var endpoints: [String] = []
        for item in list(variable).isEmpty ? [string(variable)] : list(variable) {
            endpoints.append(try zmqEndpoint(variable, text: item))
        }
        return endpoints
    }

    /// A ZeroMQ endpoint: `tcp://host:port`, `ipc://path` or `inproc://name`.
    public func zmqEndpoint(_ variable: ConfigurationVariable) throws(ConfigurationError) -> String {
        try zmqEndpoint(variable, text: string(variable))
    }

    private func zmqEndpoint(_ variable: ConfigurationVariable, text: String) throws(ConfigurationError) -> String {
        let valid: Bool
        if text.hasPrefix("tcp://") {
            valid = SocketAddress(String(text.dropFirst(6))) != nil
        } else {
            valid = (text.hasPrefix("ipc://") || text.hasPrefix("inproc://")) && !text.hasSuffix("//")
        }
        guard valid else {
            throw ConfigurationError(
                variable: variable.rawValue,
                reason: "expected a ZeroMQ endpoint such as tcp://127.0.0.1:7420, got '\(text)'")
        }
        return text
    }

    /// Variables that look like ours but that no component reads: usually a typo,
    /// worth a warning at start-up.
    public func unknownVariables() -> [String] {
        let known = Set(ConfigurationVariable.allCases.map(\.rawValue))
        return values.keys.filter { $0.hasPrefix("STOREKEEPER_") && !known.contains($0) }.sorted()
    }
}

/// A `host:port` pair to listen on or connect to.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    public let host: String
    public let port: Int

    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" "), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        self.host = host
        self.port = port
    }

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
