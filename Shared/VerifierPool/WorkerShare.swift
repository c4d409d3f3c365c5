import Synchronization

/// How many requests a pool worker offers its gateway: its share of the
/// verifier's in-flight bound. `PoolDiscovery` changes it when pools appear
/// or leave; the worker reads it once a heartbeat and announces a change.
public final class WorkerShare: Sendable {
    private let value: Atomic<Int>

    public init(_ requests: Int) {
        value = Atomic(max(0, requests))
    }

    public var requests: Int { value.load(ordering: .relaxed) }

    public func set(_ requests: Int) { value.store(max(0, requests), ordering: .relaxed) }
}
