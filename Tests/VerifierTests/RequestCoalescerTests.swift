import Synchronization
import Testing

@testable import Verifier

@Suite("Request coalescing: one call per key at a time")
struct RequestCoalescerTests {
    final class Runs: Sendable {
        let count = Mutex(0)
    }

    @Test func aLoneCallerLeadsAndTheKeyIsFreeAgainAfterwards() async {
        let coalescer = RequestCoalescer<String, Int>()
        let first = await coalescer.run("k") { 1 }
        let second = await coalescer.run("k") { 2 }
        #expect(first == (1, false) && second == (2, false))
        #expect(coalescer.followerCount == 0)
    }

    @Test func callersWhileTheLeaderWorksShareItsValueAndTheWorkRunsOnce() async {
        let coalescer = RequestCoalescer<String, Int>()
        let runs = Runs()
        let (gate, release) = AsyncStream.makeStream(of: Void.self)
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            group.addTask {
                await coalescer.run("k") {
                    runs.count.withLock { $0 += 1 }
                    for await _ in gate { break }
                    return 7
                }
            }
            // The leader holds the key once its work has started (bounded wait).
            for _ in 0..<10_000 where runs.count.withLock({ $0 }) == 0 { try? await Task.sleep(for: .milliseconds(1)) }
            for _ in 0..<3 {
                group.addTask { await coalescer.run("k") { runs.count.withLock { $0 += 1 }; return -1 } }
            }
            for _ in 0..<10_000 where coalescer.followerCount < 3 { try? await Task.sleep(for: .milliseconds(1)) }
            release.yield()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.count.withLock { $0 } == 1)
        #expect(results.map { $0.0 } == [7, 7, 7, 7])
        #expect(results.filter { $0.1 }.count == 3)
        #expect(coalescer.followerCount == 0)
    }

    @Test func anotherKeyIsNotHeldUpByALeader() async {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, release) = AsyncStream.makeStream(of: Void.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = await coalescer.run("a") { for await _ in gate { break }; return 1 } }
            let other = await coalescer.run("b") { 2 }
            #expect(other == (2, false))
            release.yield()
        }
    }
}
