import Foundation
import Logging
import Synchronization

/// The process's log handler: text or JSON lines on standard error, secrets
/// redacted, each record written whole (records from concurrent tasks never
/// interleave).
public struct StorekeeperLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    private let label: String
    private let renderer: LogRecordRenderer
    private let sink: LogSink

    init(label: String, level: Logger.Level, renderer: LogRecordRenderer, sink: LogSink) {
        self.label = label
        self.logLevel = level
        self.renderer = renderer
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let line = renderer.render(
            timestamp: Date(), level: event.level, label: label, message: event.message.description, metadata: merged)
        sink.write(line)
    }
}

/// Where rendered lines go: standard error, or a buffer in tests.
final class LogSink: Sendable {
    private let capturing: Bool
    private let lines = Mutex<[String]>([])

    /// Lines go to standard error.
    static let standardError = LogSink(capturing: false)

    init(capturing: Bool) { self.capturing = capturing }

    func write(_ line: String) {
        if capturing {
            lines.withLock { $0.append(line) }
        } else {
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    var captured: [String] { lines.withLock { $0 } }
}
