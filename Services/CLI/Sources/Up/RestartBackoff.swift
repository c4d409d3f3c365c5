/// How long the supervisor waits before restarting a child that died: 250 ms
/// doubling to 10 s for a child that keeps crashing, back to the start once a
/// child has stayed up for a while (a crash then is news, not a crash loop).
struct RestartBackoff: Equatable {
    static let first: Duration = .milliseconds(250)
    static let longest: Duration = .seconds(10)
    static let stableAfter: Duration = .seconds(30)

    private(set) var consecutiveCrashes = 0

    /// The delay before the next start, for a child that ran `uptime` before it died.
    mutating func delay(afterRunningFor uptime: Duration) -> Duration {
        if uptime >= Self.stableAfter { consecutiveCrashes = 0 }
        defer { consecutiveCrashes += 1 }
        var delay = Self.first
        for _ in 0..<consecutiveCrashes where delay < Self.longest { delay *= 2 }
        return min(delay, Self.longest)
    }
}
