import Metrics

/// How often the ledgers sharing PostgreSQL ran into each other.
struct PostgresStoreMetrics: Sendable {
    private let conflicts = Counter(label: "storekeeper_ledger_serialization_retries_total")

    func conflict() { conflicts.increment() }
}
