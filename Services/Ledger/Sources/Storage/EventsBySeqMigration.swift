/// Events are pruned by `seq`, not through an index of their time. Every
/// commit wrote its events into `events_by_time` as well, one more page (a
/// WAL frame of 4 KiB, two `pwrite`s) per commit, for a sweep that runs once
/// an hour. The sweep now deletes the oldest run of events, in `seq` order up
/// to the first one still young (`SQLiteLedgerSession.pruneEventsSQL`): a
/// ledger appends them with its own clock, so `seq` order is time order.
enum EventsBySeqMigration {
    static let name = "v9-events-pruned-by-seq"

    static let sqlite = "DROP INDEX IF EXISTS events_by_time"
}
