import Foundation
import Logging

/// Turns one log record into one line, as text or JSON, with secrets redacted
/// from the message and from every metadata value.
struct LogRecordRenderer: Sendable {
    let format: LogSettings.Format
    let redactor: SecretRedactor

    func render(
        timestamp: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata
    ) -> String {
        let flattened = metadata.sorted { $0.key < $1.key }.map { ($0.key, redactor.redact($0.value.description)) }
        let message = redactor.redact(message)
        let time = timestamp.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        switch format {
        case .text:
            let fields = flattened.map { " \($0)=\($1)" }.joined()
            return "\(time) \(level.rawValue.uppercased()) \(label): \(message)\(fields)\n"
        case .json:
            var fields = [("ts", time), ("level", level.rawValue), ("logger", label), ("msg", message)]
            fields += flattened
            let body = fields.map { "\(Self.quoted($0)):\(Self.quoted($1))" }.joined(separator: ",")
            return "{\(body)}\n"
        }
    }

    /// A JSON string literal (RFC 8259 escaping).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
