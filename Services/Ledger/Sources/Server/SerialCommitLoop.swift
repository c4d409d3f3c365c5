import Dispatch

/// The group committer's loop for a store that commits one group at a time
/// on its caller's thread, blocking it (SQLite). It runs on a thread of its
/// own (`ledger-writer`): the loop, each commit and its fsync run there, and
/// between groups the thread sleeps on a semaphore that a submit (or the
/// stop) signals.
///
/// Why a plain thread, not an actor on one (the design until 2026-11-27): a
/// task asleep on an actor woke through the global executor, an event-loop
/// thread, which then handed it to the actor's thread: two wake-ups where
/// this takes one. And GRDB's async write hopped to its writer queue and back
/// for every group. Here the next group starts on the same thread as soon as
/// the last is on disk (bench/JOURNAL.md, "2026-11-27, 22:06").
struct SerialCommitLoop: Sendable {
    let committer: GroupCommitter
    let store: any BlockingLedgerStore

    /// Commits until the committer stops, then returns. Blocks: call it on
    /// the writer's own thread, never from async code.
    @available(*, noasync, message: "blocks its thread: run it on a thread of its own")
    func run() {
        let signal = DispatchSemaphore(value: 0)
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
                committer.sleepUntilWork(on: signal)
            case .finish:
                return
            }
        }
    }
}
