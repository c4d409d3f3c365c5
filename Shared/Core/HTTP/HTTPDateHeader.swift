#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Timekeeping

/// The `Date` header every response carries (RFC 9110 §6.6.1), in the
/// IMF-fixdate form: `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// Formatted again only when the second changes, by the request that sees it
/// change: no task ticks beside the server (Hummingbird's own date cache is a
/// timer service, see `HTTPServerService` for why it is not used).
public final class HTTPDateHeader: Sendable {
    private let clock: WallClock
    private let cached = Mutex<(second: Int64, text: String)>((.min, ""))

    public init(clock: WallClock = .system) {
        self.clock = clock
    }

    /// The header's value for the current second.
    public var value: String {
        let second = clock.now() / 1_000
        if let text = cached.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = Self.format(secondsSinceEpoch: second)
        cached.withLock { $0 = (second, text) }
        return text
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(secondsSinceEpoch: Int64) -> String {
        var time = time_t(secondsSinceEpoch)
        var parts = tm()
        gmtime_r(&time, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
    }
}
