import Foundation

/// The wall clock, read in the unit of every deadline and date between
/// Storekeeper's processes: milliseconds since the Unix epoch (the envelope's
/// `deadline_ms`, Apple's `*_date_ms`). Components take one instead of reading
/// `Date()` themselves, so a test sets the time.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Int64

    public init(_ read: @escaping @Sendable () -> Int64) { self.read = read }

    /// The machine's clock.
    public static let system = WallClock { Int64((Date().timeIntervalSince1970 * 1_000).rounded(.down)) }

    /// A clock that always reads `milliseconds`.
    public static func fixed(at milliseconds: Int64) -> WallClock { WallClock { milliseconds } }

    /// Milliseconds since the Unix epoch, now.
    public func now() -> Int64 { read() }

    /// The absolute deadline `duration` from now, in milliseconds since the epoch.
    public func deadline(after duration: Duration) -> Int64 { read() + duration.milliseconds }

    /// What is left until `deadline` (milliseconds since the epoch), never below zero.
    public func remaining(until deadline: Int64) -> Duration { .milliseconds(max(0, deadline - read())) }
}
