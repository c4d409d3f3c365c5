import Dispatch

/// When each shard's curl timer is due, read by the loop in every turn.
///
/// Why integers in one array: the loop asks for the earliest timer before it
/// waits and for the due ones after, every turn. Kept as an optional
/// `ContinuousClock.Instant` on each shard object, that cost a turn about
/// 8,000 instructions over 16 shards (each value copied through its
/// witnesses, each property read checked for exclusive access): some 40,000
/// per Apple call when calls come one at a time (callgrind). Times are
/// `DispatchTime` nanoseconds (the monotonic clock).
///
/// Lives on the loop thread only, like the loop and its shards.
final class ShardTimers {
    /// Per shard, when its timer is due; `none` when it has no timer.
    private var deadlines: [UInt64]
    private static let none = UInt64.max

    init(shards: Int) {
        deadlines = Array(repeating: Self.none, count: shards)
    }

    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// curl's timer callback: due in `milliseconds` from `now`; negative removes the timer.
    /// (Capped at about 35 years, so that the nanoseconds cannot overflow.)
    func set(_ shard: Int, milliseconds: Int, now: UInt64 = ShardTimers.now) {
        deadlines[shard] = milliseconds < 0 ? Self.none : now + UInt64(min(milliseconds, 1 << 40)) * 1_000_000
    }

    /// Milliseconds from `now` until the earliest timer, rounded up (0 when one is
    /// due); nil when no shard has a timer.
    func millisecondsUntilEarliest(now: UInt64) -> Int? {
        guard let earliest = deadlines.min(), earliest != Self.none else { return nil }
        guard earliest > now else { return 0 }
        let nanoseconds = earliest - now
        return Int(clamping: nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 == 0 ? 0 : 1))
    }

    /// The shards whose timers are due at `now`, each timer removed: curl is
    /// then told of its time-out, and sets a new timer if it wants one.
    func takeDue(now: UInt64) -> [Int] {
        var due: [Int] = []
        for shard in deadlines.indices where deadlines[shard] <= now {
            deadlines[shard] = Self.none
            due.append(shard)
        }
        return due
    }
}
