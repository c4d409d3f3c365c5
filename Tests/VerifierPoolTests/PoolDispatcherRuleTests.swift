import PropertyBased
import Testing

@testable import VerifierPool

/// The dispatcher's choice, over any mix of workers, requests and replies,
/// against the rule written out plainly: the most free credits, then given
/// work least recently, then the lowest identity; what finds no credit waits
/// in order.
@Suite struct PoolDispatcherRuleTests {
    /// The rule, kept the slow and obvious way.
    struct Model {
        var free: [[UInt8]: Int]
        var lastGiven: [[UInt8]: Int] = [:]
        var given = 0
        var queue: [UInt64] = []
        var outstanding: [(request: UInt64, worker: [UInt8])] = []

        mutating func dispatch() -> [PoolDispatcher.Dispatch] {
            var sent: [PoolDispatcher.Dispatch] = []
            while let request = queue.first {
                let candidates = free.filter { $0.value > 0 }.map(\.key)
                guard let worker = candidates.min(by: precedes) else { break }
                queue.removeFirst()
                free[worker, default: 0] -= 1
                given += 1
                lastGiven[worker] = given
                outstanding.append((request, worker))
                sent.append(PoolDispatcher.Dispatch(worker: worker, request: request))
            }
            return sent
        }

        func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            if free[a]! != free[b]! { return free[a]! > free[b]! }
            if lastGiven[a, default: 0] != lastGiven[b, default: 0] { return lastGiven[a, default: 0] < lastGiven[b, default: 0] }
            return a.lexicographicallyPrecedes(b)
        }
    }

    @Test func everyDispatchFollowsTheRule() async {
        // Steps: 0-2 submit a request, 3 the oldest request still out is replied to.
        await propertyCheck(count: 400, input: Gen.int(in: 0...4).array(of: 1...6), Gen.int(in: 0...3).array(of: 1...60)) {
            capacities, steps in
            let now = ContinuousClock.now
            // Identities in an order unrelated to the capacities, some of two bytes.
            let ids = capacities.indices.map { index in index % 2 == 0 ? [UInt8((index * 5) % 7)] : [UInt8((index * 5) % 7), 0] }
            var dispatcher = PoolDispatcher()
            for (id, capacity) in zip(ids, capacities) { _ = dispatcher.ready(id, capacity: capacity, now: now) }
            var model = Model(free: Dictionary(uniqueKeysWithValues: zip(ids, capacities)))
            var next: UInt64 = 1
            for step in steps {
                if step < 3 {
                    model.queue.append(next)
                    #expect(dispatcher.submit(next, deadline: now + .seconds(30), now: now) == model.dispatch())
                    next += 1
                } else if !model.outstanding.isEmpty {
                    let (request, worker) = model.outstanding.removeFirst()
                    model.free[worker, default: 0] += 1
                    let (deliver, sent) = dispatcher.replied(request, from: worker, now: now)
                    #expect(deliver)
                    #expect(sent == model.dispatch())
                }
            }
            #expect(dispatcher.queuedCount == model.queue.count)
        }
    }
}
