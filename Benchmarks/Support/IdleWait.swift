// Waits for processes to go idle. (b)'s halving steps each follow a step the
// server missed; run at once, a step can start behind, still working off the
// one before (bench/JOURNAL.md, "2026-11-28, 19:53").

/// How long `waitUntilIdle` waited, and whether the processes went idle in that time.
public struct IdleWait: Sendable, Equatable {
    public let waited: Duration
    public let idle: Bool
}

/// Returns once `processes` together used under `busyShare` of one core over a
/// `window`, or after `limit`. The list is read again at each window (a
/// server's workers come and go).
public func waitUntilIdle(
    _ processes: () -> [Int32], window: Duration = .milliseconds(500), limit: Duration = .seconds(30),
    busyShare: Double = 0.05
) async -> IdleWait {
    let clock = ContinuousClock()
    let start = clock.now
    while clock.now - start < limit {
        let pids = processes()
        let before = pids.map(cpuSeconds)
        try? await Task.sleep(for: window)
        let used = zip(pids.map(cpuSeconds), before).map { $0 - $1 }.reduce(0, +)
        if used < busyShare * window.seconds { return IdleWait(waited: clock.now - start, idle: true) }
    }
    return IdleWait(waited: clock.now - start, idle: false)
}
