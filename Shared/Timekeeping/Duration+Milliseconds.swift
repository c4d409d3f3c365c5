extension Duration {
    /// Whole milliseconds, rounded down (toward zero): the one conversion
    /// from a `Duration` to the milliseconds of deadlines, dates and
    /// `retry_after_ms`.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// Whole milliseconds, rounded up (a time-out must not end early).
    public var millisecondsRoundedUp: Int64 {
        let down = milliseconds
        return Duration.milliseconds(down) < self ? down + 1 : down
    }
}
