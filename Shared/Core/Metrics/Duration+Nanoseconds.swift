extension Duration {
    /// Whole nanoseconds, for swift-metrics timers.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
