/// The group committer's loop for a store that commits one group at a time
/// on its caller's thread, blocking it (SQLite): an actor on a thread of its
/// own (`WriterThreadExecutor`), so the loop, each commit and its fsync run
/// there, and only there, by actor isolation.
///
/// Why: through GRDB's async write each group hopped from the committer's
/// task (on an event loop) to GRDB's writer queue and back before the next
/// group could start. Here the next group starts on the same thread as soon
/// as the last is on disk. `storekeeper-bench-ledger --requests 20000
/// --transactions 10`: see bench/README.md ("2026-11-27, 16:20").
actor SerialCommitLoop {
    private let executor: WriterThreadExecutor
    private let committer: GroupCommitter
    private let store: any BlockingLedgerStore

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(committer: GroupCommitter, store: any BlockingLedgerStore, executor: WriterThreadExecutor) {
        self.committer = committer
        self.store = store
        self.executor = executor
    }

    /// Commits until the committer stops, then returns; the caller shuts the executor down.
    func run() async {
        while true {
            // One group at a time, and `commitBlocking` takes no prefetch: skip working it out.
            switch committer.nextAction(prefetching: false) {
            case .commit(let id, let batch, _):
                committer.commit(batch) { units, apply in try store.commitBlocking(units: units, apply) }
                committer.committed(id)
            case .awaitCommit:
                // One lane, committed inline: no group is ever under way here.
                preconditionFailure("a serial commit loop never leaves a group under way")
            case .prefetch:
                preconditionFailure("nextAction() does the prefetches")
            case .awaitWork:
                await committer.awaitWork()
            case .finish:
                return
            }
        }
    }
}
