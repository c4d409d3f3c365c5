import Foundation

/// The simulator's dates as text, in UTC: verifyReceipt's
/// `2019-11-21 06:16:20 Etc/GMT` and the app receipt's `2019-11-21T06:16:20Z`.
enum SimDate {
    static func text(_ milliseconds: Int64, separator: String, zone: String) -> String {
        // gmtime_r rather than a Calendar per call: this runs several times per answer.
        var seconds = time_t(milliseconds / 1_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))\(separator)"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))\(zone)"
    }
}
