import Metrics
import StorekeeperCore

/// The writer's figures: how many requests share a commit, how long a commit takes, how often it is re-run.
struct LedgerMetrics: Sendable {
    private let commits = Counter(label: "storekeeper_ledger_commits_total")
    private let failures = Counter(label: "storekeeper_ledger_commit_failures_total")
    private let units = Counter(label: "storekeeper_ledger_units_total")
    private let batchSize = Recorder(label: "storekeeper_ledger_batch_size", aggregate: true)
    private let duration = Timer(label: "storekeeper_ledger_commit_seconds")
    /// PostgreSQL: work run again because another ledger changed the same rows.
    private let serializationRetries = Counter(label: "storekeeper_ledger_serialization_retries_total")

    func committed(batchSize size: Int, duration elapsed: Duration) {
        commits.increment()
        units.increment(by: size)
        batchSize.record(size)
        duration.recordNanoseconds(elapsed.nanoseconds)
    }

    func commitFailed() { failures.increment() }

    func serializationRetry() { serializationRetries.increment() }
}
