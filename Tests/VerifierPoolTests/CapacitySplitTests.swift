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

    @Test func poolsJoiningTogetherStartEven() {
        var split = CapacitySplit(capacity: 4096)
        let (gateway, refresh) = (split.join(), split.join())
        #expect(split.share(for: gateway, reporting: nil) == 2048)
        #expect(split.share(for: refresh, reporting: nil) == 2048)
        // All idle: they stay even.
        #expect(split.share(for: gateway, reporting: Self.idle) == 2048)
        #expect(split.share(for: refresh, reporting: Self.idle) == 2048)
    }

    /// Two pools that started even: the gateway's used up its 2,048 credits, and
    /// the refresh pool, idle, has just been shrunk to the minimum.
    func aStarvedGatewayBesideAShrunkRefreshPool() -> (CapacitySplit, gateway: CapacitySplit.Member, refresh: CapacitySplit.Member) {
        var split = CapacitySplit(capacity: 4096)
        let (gateway, refresh) = (split.join(), split.join())
        _ = (split.share(for: gateway, reporting: nil), split.share(for: refresh, reporting: nil))
        #expect(split.share(for: gateway, reporting: Self.starved(2048)) == 2048)
        #expect(split.share(for: refresh, reporting: Self.idle) == CapacitySplit.minimumDemand)
        return (split, gateway, refresh)
    }

    @Test func aStarvedPoolGetsWhatAnIdleOneGivesUpOnceItsGatewayHasHadTimeToLearnIt() {
        var (split, gateway, refresh) = aStarvedGatewayBesideAShrunkRefreshPool()
        // The refresh pool's gateway may use its old credits until the READY arrives: held until its next report.
        #expect(split.share(for: gateway, reporting: Self.starved(2048)) == 2048)
        #expect(split.share(for: refresh, reporting: Self.idle) == CapacitySplit.minimumDemand)
        #expect(split.share(for: gateway, reporting: Self.starved(2048)) == 4096 - CapacitySplit.minimumDemand)
        // Its load easing, the gateway keeps twice its peak, and what is left is split evenly.
        let easing = Usage(inFlight: 1000, peak: 1000, starved: false)
        #expect(split.share(for: gateway, reporting: easing) == 2000 + (4096 - 2000 - 64) / 2)
        // The refresh pool gets its half of the rest once the gateway's larger share is no longer held.
        #expect(split.share(for: refresh, reporting: Self.idle) == 64)
        #expect(split.share(for: gateway, reporting: easing) == 3016)
        #expect(split.share(for: refresh, reporting: Self.idle) == 64 + 1016)
        // Both idle: even again, as the gateway's credits come back.
        #expect(split.share(for: gateway, reporting: Self.idle) == 2048)
        #expect(split.share(for: refresh, reporting: Self.idle) == 1080)
        #expect(split.share(for: gateway, reporting: Self.idle) == 2048)
        #expect(split.share(for: refresh, reporting: Self.idle) == 2048)
    }

    @Test func aShareWhoseReadyCouldNotGoStaysHeldUntilOneHasGone() {
        // The READY announcing the refresh pool's smaller share cannot go (its queue is full).
        var (split, gateway, refresh) = aStarvedGatewayBesideAShrunkRefreshPool()
        var pending = Self.idle
        pending.announcementPending = true
        // Report after report its gateway may still be using its 2,048: none of it is handed on.
        for _ in 0..<3 {
            #expect(split.share(for: refresh, reporting: pending) == CapacitySplit.minimumDemand)
            #expect(split.share(for: gateway, reporting: Self.starved(2048)) == 2048)
        }
        // The READY went after the last of those reports (a heartbeat's READY follows its report): by
        // the next report its gateway knows, and the gateway gets the rest.
        #expect(split.share(for: refresh, reporting: Self.idle) == CapacitySplit.minimumDemand)
        #expect(split.share(for: gateway, reporting: Self.starved(2048)) == 4096 - CapacitySplit.minimumDemand)
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

    @Test func aLeavingPoolGetsNothingAndHoldsItsShareUntilRemoved() {
        var split = CapacitySplit(capacity: 100)
        let (leaving, staying) = (split.join(), split.join())
        _ = (split.share(for: leaving, reporting: nil), split.share(for: staying, reporting: nil))
        #expect(split.share(for: leaving, reporting: Usage(inFlight: 10, peak: 10, starved: false)) == 50)
        split.leave(leaving)
        // Its gateway may have sent up to its 50 credits before it saw DISCONNECT: all of them count.
        #expect(split.share(for: leaving, reporting: Usage(inFlight: 10, peak: 10, starved: false)) == 0)
        #expect(split.share(for: staying, reporting: Self.starved(50)) == 50)
        split.remove(leaving)
        #expect(split.share(for: staying, reporting: Self.starved(50)) == 100)
    }

    /// Gateways that send on the credits they know of, READYs that arrive at
    /// any time before the worker's next report or cannot go and are tried
    /// again at the next, pools that join and leave,
    /// reports in any order: what gateways may have outstanding never adds up
    /// to more than the bound.
    @Test func theBoundHoldsWhateverThePoolsDo() {
        struct Pool {
            let member: Int
            var share = 0
            /// The share its gateway knows of: the last READY that arrived.
            var known = 0
            /// Whether the last READY went (one may not: its worker's queue was full) and
            /// so arrives; one that did not is tried again at the next heartbeat.
            var readyWent = true
            var inFlight = 0
            var peak = 0
            var starved = false
            var leaving = false
            /// What its gateway may have outstanding now or once the pending READY lands.
            var exposure: Int { max(share, known, inFlight) }
        }
        var random = SplitMix64(seed: 42)
        func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        for _ in 0..<300 {
            let capacity = roll(500) + 1
            var split = CapacitySplit(capacity: capacity)
            var pools = (0...roll(3)).map { _ in Pool(member: split.join()) }
            for index in pools.indices {
                pools[index].share = split.share(for: pools[index].member, reporting: nil)
            }
            for _ in 0..<200 {
                let index = roll(pools.count)
                var pool = pools[index]
                switch roll(10) {
                case 0...2:  // the gateway sends on its credits (none after it saw DISCONNECT)
                    let credits = max(0, pool.known - pool.inFlight)
                    let sent = credits == 0 ? 0 : roll(credits + 1)
                    pool.inFlight += sent
                    pool.peak = max(pool.peak, pool.inFlight)
                    if sent > 0 && sent == credits { pool.starved = true }
                case 3...4:  // replies
                    pool.inFlight = roll(pool.inFlight + 1)
                case 5:  // the pending READY (or DISCONNECT) arrives
                    if pool.readyWent { pool.known = pool.share }
                case 6...8:  // a heartbeat: the last READY that went has long arrived; report, get a share, send READY
                    if pool.readyWent { pool.known = pool.share }
                    let usage = Usage(
                        inFlight: pool.inFlight, peak: pool.peak, starved: pool.starved, announcementPending: !pool.readyWent)
                    (pool.peak, pool.starved) = (pool.inFlight, false)
                    pool.share = split.share(for: pool.member, reporting: usage)
                    pool.readyWent = pool.leaving || roll(3) != 0
                default:  // pools come and go
                    if pool.leaving && pool.inFlight == 0 && pool.known == 0 && pools.count > 1 {
                        split.remove(pool.member)
                        pools.remove(at: index)
                        continue
                    } else if !pool.leaving && roll(4) == 0 {
                        split.leave(pool.member)
                        // DISCONNECT waits for its queue: it always goes.
                        (pool.leaving, pool.share, pool.readyWent) = (true, 0, true)
                    } else if pools.count < 5 {
                        var joined = Pool(member: split.join())
                        joined.share = split.share(for: joined.member, reporting: nil)
                        pools.append(joined)
                    }
                }
                pools[index] = pool
                let exposure = pools.reduce(0) { $0 + $1.exposure }
                #expect(exposure <= capacity, "capacity \(capacity): \(pools)")
                if exposure > capacity { return }
            }
        }
    }
}
