import Logging

/// How a process logs: `STOREKEEPER_LOG_LEVEL` and `STOREKEEPER_LOG_FORMAT`.
public struct LogSettings: Sendable, Equatable {
    public enum Format: String, CaseIterable, Sendable {
        /// One readable line per record, for a terminal.
        case text
        /// One JSON object per line, for a log collector.
        case json
    }

    public var level: Logger.Level
    public var format: Format

    public init(level: Logger.Level = .info, format: Format = .text) {
        self.level = level
        self.format = format
    }

    public init(reader: EnvironmentReader) throws(ConfigurationError) {
        let levelName = reader.string(.logLevel).lowercased()
        guard let level = Logger.Level(rawValue: levelName) else {
            let allowed = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(
                variable: ConfigurationVariable.logLevel.rawValue, reason: "expected one of \(allowed), got '\(levelName)'")
        }
        self.level = level
        self.format = try reader.choice(.logFormat)
    }
}
