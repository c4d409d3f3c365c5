/// The span of Apple's notification history one catch-up asks for, from the
/// cursor (the end of the last span applied) and the time. Pure.
///
/// - It starts `overlap` before the cursor: Apple lists a notification in its
///   history once it has tried to send it, which may be after a span that
///   covered its time ended; applying one twice changes nothing (each is
///   applied once, by its id).
/// - With no cursor yet (the first run), it starts `firstLookback` ago.
/// - It never starts earlier than Apple keeps history (180 days), and spans
///   at most `maxSpan`: a ledger that was down long catches up span by span,
///   each one a pool request that fits its deadline.
struct CatchUpWindow: Equatable, Sendable {
    static let overlapMs: Int64 = 10 * 60_000
    static let firstLookbackMs: Int64 = 60 * 60_000
    static let maxSpanMs: Int64 = 60 * 60_000
    /// Apple answers notification history of the last 180 days; a day less, for clocks.
    static let retentionMs: Int64 = 179 * 86_400_000

    let startMs: Int64
    let endMs: Int64
    /// The span ends now: nothing left to catch up after it.
    let reachesNow: Bool

    init(startMs: Int64, endMs: Int64, reachesNow: Bool) {
        self.startMs = startMs
        self.endMs = endMs
        self.reachesNow = reachesNow
    }

    /// The next span after a cursor (nil: never caught up) at `nowMs`.
    init(after appliedUntilMs: Int64?, nowMs: Int64) {
        let wanted = appliedUntilMs.map { $0 - Self.overlapMs } ?? nowMs - Self.firstLookbackMs
        let start = min(max(wanted, nowMs - Self.retentionMs), nowMs)
        let end = min(nowMs, start + Self.maxSpanMs)
        self.init(startMs: start, endMs: end, reachesNow: end == nowMs)
    }
}
