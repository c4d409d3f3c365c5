import Logging

/// Installs the process-wide log handler. Called once, by an executable's
/// main; libraries and tests receive loggers instead.
public enum LoggingBootstrap {
    public static func bootstrap(_ settings: LogSettings, secrets: [Secret]) {
        let renderer = LogRecordRenderer(format: settings.format, redactor: SecretRedactor(secrets: secrets))
        LoggingSystem.bootstrap { label in
            StorekeeperLogHandler(label: label, level: settings.level, renderer: renderer, sink: .standardError)
        }
    }

    /// A logger writing into memory, for tests (no global bootstrap).
    public static func capturingLogger(
        label: String, settings: LogSettings, secrets: [Secret] = []
    ) -> (Logger, @Sendable () -> [String]) {
        let sink = LogSink(capturing: true)
        let renderer = LogRecordRenderer(format: settings.format, redactor: SecretRedactor(secrets: secrets))
        let logger = Logger(label: label) { label in
            StorekeeperLogHandler(label: label, level: settings.level, renderer: renderer, sink: sink)
        }
        return (logger, { sink.captured })
    }
}
