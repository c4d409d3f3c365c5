import Metrics
import Synchronization

/// `storekeeper_apple_request_duration_seconds` by environment and status, each
/// made once. Made per call, every Apple call paid for the factory's name check,
/// its registry look-up and a new histogram handle (about 6k instructions,
/// bench/JOURNAL.md "2026-11-28, 19:53").
final class CallDurations: Sendable {
    static let label = "storekeeper_apple_request_duration_seconds"
    /// Apple's statuses are a short documented list; past this many pairs (an Apple
    /// inventing statuses) a timer is made per call, as before, rather than kept.
    static let kept = 256

    private let factory: any MetricsFactory
    private let timers = Mutex<[Key: Timer]>([:])

    private struct Key: Hashable {
        let environment: String
        let status: String
    }

    init(factory: any MetricsFactory) { self.factory = factory }

    func timer(environment: String, status: String) -> Timer {
        let key = Key(environment: environment, status: status)
        if let timer = timers.withLock({ $0[key] }) { return timer }
        let timer = Timer(
            label: Self.label, dimensions: [("environment", environment), ("status", status)], factory: factory)
        timers.withLock { if $0.count < Self.kept { $0[key] = timer } }
        return timer
    }

    /// How many timers are kept (tests).
    var count: Int { timers.withLock(\.count) }
}
