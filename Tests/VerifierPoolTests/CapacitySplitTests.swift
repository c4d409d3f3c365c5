import SeededRandom
import Testing

@testable import VerifierPool

/// How a verifier's in-flight bound follows what its pools use, without sockets or a clock.
@Suite struct CapacitySplitTests {
    typealias Usage = CapacitySplit.Usage

    static let idle = Usage(inFlight: 0, peak: 0, starved: false)
    static func starved(_ inFlight: Int) -> Usage { Usage(inFlight: inFlight, peak: inFlight, starved: true) }

    @Test func targetsMeetTheSmallestDemandsFirstAndSplitWhatNobodyAskedFor() {
        #expect(CapacitySplit.targets(capacity: 4096, demands: [64, nil]) == [64, 4032])
        #expect(CapacitySplit.targets(capacity: 4096, demands: [nil, 64]) == [4032, 64])
        #expect(CapacitySplit.targets(capacity: 4096, demands: [nil, nil]) == [2048, 2048])
        // Max-min fair: the demand above an equal part gets the equal part of what is left.
        #expect(CapacitySplit.targets(capacity: 4096, demands: [100, 3000, nil]) == [100, 1998, 1998])
        // Nobody starved: the rest is split evenly, its remainder to the first.
        #expect(CapacitySplit.targets(capacity: 4096, demands: [64, 64]) == [2048, 2048])
        #expect(CapacitySplit.targets(capacity: 100, demands: [10, 20]) == [45, 55])
        #expect(CapacitySplit.targets(capacity: 10, demands: [1, 1, 1]) == [4, 3, 3])
        #expect(CapacitySplit.targets(capacity: 10, demands: []) == [])
    }

    @Test func pollsJoiningTogetherStartEven() {
        var split = CapacitySplit(capacity: 4096)
        let (gateway, refresh) = (split.join(), split.join())
        #expect(split.share(for: gateway, reporting: nil) == 2048)
        #expect(split.share(for: refresh, reporting: nil) == 2048)
        // All idle: they stay even.
        #expect(split.share(for: gateway, reporting: Self.idle) == 2048)
        #expect(split.share(for: refresh, reporting: Self.idle) == 2048)
    }

    @Test func aStarvedPoolGetsWhatTheIdleOneGivesUpOnlyOnceItHasGivenItUp() {
        var split = CapacitySplit(capacity: 4096)
        let (gateway, refresh) = (split.join(), split.join())
        _ = (split.share(for: gateway, reporting: nil), split.share(for: refresh, reporting: nil))
        // The gateway used up its 2,048 credits; the refresh pool still holds its half.
        #expect(split.share(for: gateway, reporting: Self.starved(2048)) == 2048)
        // The refresh pool reports it is idle and keeps the minimum.
        #expect(split.share(for: refresh, reporting: Self.idle) == CapacitySplit.minimumDemand)
        #expect(split.share(for: gateway, reporting: Self.starved(2048)) == 4096 - CapacitySplit.minimumDemand)
        // Its load gone, the gateway keeps room for twice its peak...
        #expect(split.share(for: gateway, reporting: Usage(inFlight: 1000, peak: 3000, starved: false)) == 4032)
        // ...and once it is idle too, the two are even again.
        #expect(split.share(for: gateway, reporting: Self.idle) == 2048)
        #expect(split.share(for: refresh, reporting: Self.idle) == 2048)
    }

    @Test func aPoolDrainingOverItsShareHoldsWhatItHasInFlight() {
        var split = CapacitySplit(capacity: 4096)
        let first = split.join()
        #expect(split.share(for: first, reporting: nil) == 4096)
        #expect(split.share(for: first, reporting: Self.starved(4096)) == 4096)
        // A second gateway appears while the first holds everything: it starts with nothing...
        let second = split.join()
        #expect(split.share(for: second, reporting: nil) == 0)
        // ...asks, and gets half once the first has shrunk, less what the first still has in flight.
        #expect(split.share(for: second, reporting: Self.starved(0)) == 0)
        #expect(split.share(for: first, reporting: Self.starved(4096)) == 2048)
        #expect(split.share(for: second, reporting: Self.starved(0)) == 0)
        #expect(split.share(for: first, reporting: Self.starved(3000)) == 2048)
        #expect(split.share(for: second, reporting: Self.starved(0)) == 1096)
        #expect(split.share(for: first, reporting: Self.starved(2048)) == 2048)
        #expect(split.share(for: second, reporting: Self.starved(1096)) == 2048)
    }

    @Test func aLeavingPoolGetsNothingAndHoldsItsRequestsUntilRemoved() {
        var split = CapacitySplit(capacity: 100)
        let (leaving, staying) = (split.join(), split.join())
        _ = (split.share(for: leaving, reporting: nil), split.share(for: staying, reporting: nil))
        #expect(split.share(for: leaving, reporting: Self.starved(50)) == 50)
        split.leave(leaving)
        #expect(split.share(for: leaving, reporting: Self.starved(50)) == 0)
        // Its 50 requests still run: the other pool may not take them yet.
        #expect(split.share(for: staying, reporting: Self.starved(50)) == 50)
        split.remove(leaving)
        #expect(split.share(for: staying, reporting: Self.starved(50)) == 100)
    }

    /// Gateways that send at most the credits they hold, reporting in any order:
    /// what all pools may hold together never exceeds the bound.
    @Test func theBoundHoldsWhateverThePoolsReport() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<200 {
            let capacity = Int(random.next() % 500) + 1
            var split = CapacitySplit(capacity: capacity)
            var pools: [(member: Int, share: Int, inFlight: Int)] = []
            for _ in 0..<Int(random.next() % 4) + 1 {
                pools.append((split.join(), 0, 0))
            }
            for index in pools.indices { pools[index].share = split.share(for: pools[index].member, reporting: nil) }
            for _ in 0..<100 {
                let index = Int(random.next() % UInt64(pools.count))
                var pool = pools[index]
                // Requests come (up to what the gateway may send) and go.
                let most = max(pool.share, pool.inFlight)
                pool.inFlight = Int(random.next() % UInt64(most + 1))
                let usage = Usage(inFlight: pool.inFlight, peak: pool.inFlight, starved: pool.inFlight >= pool.share)
                pool.share = split.share(for: pool.member, reporting: usage)
                pools[index] = pool
                let held = pools.reduce(0) { $0 + max($1.share, $1.inFlight) }
                #expect(held <= capacity, "capacity \(capacity), pools \(pools)")
            }
        }
    }
}
