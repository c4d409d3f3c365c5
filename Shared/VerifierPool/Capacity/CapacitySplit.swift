/// How a verifier's in-flight bound is split over its pools (the gateways'
/// and the ledger's refresh pool), following what each uses: a pure value,
/// no sockets and no clock. `VerifierCapacity` holds one behind a lock; each
/// worker reports its use once a heartbeat and gets its share back.
///
/// An even split left half of a verifier idle behind the refresh pool, which
/// sends a request a second or so: with Apple at 3 s a gateway could keep
/// only 2,048 of a verifier's 4,096 calls in flight, and the stack sustained
/// 1,270 verifications a second however many it was offered.
///
/// - **Targets, max-min fair.** A pool that used up its credits since it
///   last reported (`starved`) asks for as much as it can get; any other
///   asks for twice its peak in flight (room to double before the next
///   report), at least `minimumDemand` (a pool that has not reported yet
///   counts as idle). Smallest demands are met first, each at most an
///   equal part of what is left; starved pools share the rest equally. What
///   nobody asked for is split evenly, so pools that are all idle keep an
///   even split and any of them can take a burst at once.
/// - **Never more than the bound.** A pool is granted at most its target and
///   at most what the others do not hold. A pool holds the largest of its
///   share, its share before its last report (its gateway may still be
///   using those credits until the READY that shrank them arrives, which is
///   long before the next report a heartbeat later, unless the READY could
///   not go: then the larger of the two is held until one has gone) and its
///   requests in flight (a pool over a smaller share drains; the protocol
///   cannot take requests back). A leaving pool holds all that until its worker stops.
///   So what gateways may have outstanding never adds up to more than the
///   bound, but for requests sent on credits the bookkeeping has not seen
///   (a READY crossing a gateway restart), which the verifier's own bound
///   turns away as overloaded.
/// - A verifier with fewer requests than pools leaves some pools without
///   any: give it at least one per pool.
struct CapacitySplit: Sendable {
    typealias Member = Int

    /// What a pool's worker saw since it last reported.
    struct Usage: Equatable, Sendable {
        var inFlight: Int
        var peak: Int
        var starved: Bool
        /// The READY announcing the pool's share has not gone yet: its gateway
        /// may still be using credits from a share before it.
        var announcementPending = false
    }

    /// Demand of an idle pool that is not starved: enough for the refresh
    /// pool's trickle, and any pool that needs more is starved within a
    /// heartbeat and asks again.
    static let minimumDemand = 64

    private struct Pool {
        var usage: Usage?
        var share = 0
        var shareBefore = 0
        var leaving = false
        /// What its gateway may have outstanding (see "Never more than the bound").
        var held: Int { max(share, shareBefore, usage?.inFlight ?? 0) }
    }

    let capacity: Int
    private var pools: [Member: Pool] = [:]
    private var nextMember = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// A new pool, holding nothing until `share(for:reporting:)` grants it some.
    mutating func join() -> Member {
        defer { nextMember += 1 }
        pools[nextMember] = Pool()
        return nextMember
    }

    /// The pool's worker is leaving: it gets no more and asks for nothing,
    /// but what it holds, requests its gateway sent before it saw DISCONNECT
    /// included, counts until `remove`.
    mutating func leave(_ member: Member) {
        pools[member]?.leaving = true
    }

    /// The worker has stopped: nothing of it is held any more.
    mutating func remove(_ member: Member) {
        pools[member] = nil
    }

    /// Records `usage` (nil: nothing to report yet) and returns the pool's
    /// share now (0 once it is leaving).
    mutating func share(for member: Member, reporting usage: Usage?) -> Int {
        guard var pool = pools[member] else { return 0 }
        if let usage { pool.usage = usage }
        pools[member] = pool
        if pool.leaving { return 0 }
        let active = pools.keys.sorted().filter { pools[$0]?.leaving == false }
        let targets = Self.targets(capacity: capacity, demands: active.map { demand(of: pools[$0]!, among: active.count) })
        let target = targets[active.firstIndex(of: member)!]
        let heldByOthers = pools.reduce(0) { $0 + ($1.key == member ? 0 : $1.value.held) }
        let share = max(0, min(target, capacity - heldByOthers))
        // What the gateway may be using until it learns of the new share.
        pools[member]?.shareBefore = usage?.announcementPending == true ? max(pool.share, pool.shareBefore) : pool.share
        pools[member]?.share = share
        return share
    }

    /// nil: as much as it can get. A pool yet to report counts as idle: were it
    /// to ask for an even part, the pools that have reported would lose what
    /// it asks beyond the minimum until it does.
    private func demand(of pool: Pool, among count: Int) -> Int? {
        let usage = pool.usage ?? Usage(inFlight: 0, peak: 0, starved: false)
        if usage.starved { return nil }
        return max(2 * usage.peak, 1, min(Self.minimumDemand, capacity / count))
    }

    /// Max-min fair shares of `capacity` for `demands` (nil: unbounded), in their order; what
    /// nobody asked for is split evenly, the remainder of that division to the first.
    static func targets(capacity: Int, demands: [Int?]) -> [Int] {
        guard !demands.isEmpty else { return [] }
        var targets = Array(repeating: 0, count: demands.count)
        var left = capacity
        let smallestFirst = demands.indices.sorted { (demands[$0] ?? .max) < (demands[$1] ?? .max) }
        for (position, index) in smallestFirst.enumerated() {
            targets[index] = min(demands[index] ?? .max, left / (demands.count - position))
            left -= targets[index]
        }
        for index in targets.indices {
            targets[index] += left / demands.count + (index < left % demands.count ? 1 : 0)
        }
        return targets
    }
}
