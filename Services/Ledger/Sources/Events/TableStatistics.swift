/// When the elected sequencer refreshes the planner's statistics of the
/// ledger's tables: each time the event stream has doubled (and grown by at
/// least `minimumGrowth`) since the last time.
///
/// A group's statements look rows up by key, and PostgreSQL only probes an
/// index per key when it knows the table is large. Autovacuum re-reads a
/// table's statistics at most once a minute, so a young ledger growing by
/// thousands of rows a second was planned as the few rows it held at the
/// last ANALYZE: a hash of every row per statement, 8 to 60 ms instead of
/// 2. Doubling keeps the cost small: about 20 ANALYZE runs up to a million
/// events, then autovacuum's own schedule is soon enough.
struct TableStatistics {
    static let tables = "transactions, bindings, subscriptions, events"
    static let minimumGrowth: UInt64 = 1_000

    var analyzedAtHead: UInt64

    func due(at head: UInt64) -> Bool {
        head >= analyzedAtHead + max(Self.minimumGrowth, analyzedAtHead)
    }
}
