import Synchronization

/// A verifier's in-flight bound, shared by its pool workers as they use it
/// (`CapacitySplit` has the rules). `PoolDiscovery` makes one and gives each
/// worker a `PoolCapacity`.
public final class VerifierCapacity: Sendable {
    fileprivate let split: Mutex<CapacitySplit>

    public init(maxInFlight: Int) {
        split = Mutex(CapacitySplit(capacity: maxInFlight))
    }

    /// A new pool's part, holding nothing until its worker runs and takes its
    /// first share. Several pools joining together (the first round of a
    /// verifier) should all join before any takes its share, or the first
    /// takes everything and the others start with nothing.
    public func join() -> PoolCapacity {
        PoolCapacity(owner: self, member: split.withLock { $0.join() })
    }
}

/// One pool worker's part of its verifier's in-flight bound: it reports
/// what it used once a heartbeat and announces the share it gets back.
public final class PoolCapacity: Sendable {
    private let owner: VerifierCapacity
    private let member: CapacitySplit.Member

    fileprivate init(owner: VerifierCapacity, member: CapacitySplit.Member) {
        self.owner = owner
        self.member = member
    }

    /// The share to start with, before anything was used.
    func firstShare() -> Int { owner.split.withLock { $0.share(for: member, reporting: nil) } }

    /// Records what the worker used since its last report and returns its share now.
    func share(reporting usage: CapacitySplit.Usage) -> Int {
        owner.split.withLock { $0.share(for: member, reporting: usage) }
    }

    /// The worker is leaving its pool: it gets nothing more, and what it holds still counts.
    func leave() { owner.split.withLock { $0.leave(member) } }

    /// The worker has stopped: its part goes back to the others.
    func release() { owner.split.withLock { $0.remove(member) } }
}
