import Synchronization
import Testing

@testable import Verifier

/// A broken coalescer tends to leave a caller waiting for ever: the time limit turns that into a failure.
@Suite("Request coalescing: one call per key at a time", .timeLimit(.minutes(1)))
struct RequestCoalescerTests {
    final class Counter: Sendable {
        let value = Mutex(0)
        var current: Int { value.withLock { $0 } }
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
        let runs = Counter()
        let (gate, release) = AsyncStream.makeStream(of: Void.self)
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            group.addTask {
                await coalescer.run("k") {
                    runs.value.withLock { $0 += 1 }
                    for await _ in gate { break }
                    return 7
                }
            }
            // The leader holds the key once its work has started (bounded wait).
            for _ in 0..<10_000 where runs.current == 0 { try? await Task.sleep(for: .milliseconds(1)) }
            for _ in 0..<3 {
                group.addTask { await coalescer.run("k") { runs.value.withLock { $0 += 1 }; return -1 } }
            }
            for _ in 0..<10_000 where coalescer.followerCount < 3 { try? await Task.sleep(for: .milliseconds(1)) }
            release.yield()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.current == 1)
        #expect(results.map { $0.0 } == [7, 7, 7, 7])
        #expect(results.filter { $0.1 }.count == 3)
        #expect(coalescer.followerCount == 0)
    }

    @Test func anotherKeyIsNotHeldUpByALeader() async {
        let coalescer = RequestCoalescer<String, Int>()
        let started = Counter()
        let (gate, release) = AsyncStream.makeStream(of: Void.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                _ = await coalescer.run("a") {
                    started.value.withLock { $0 += 1 }
                    for await _ in gate { break }
                    return 1
                }
            }
            for _ in 0..<10_000 where started.current == 0 { try? await Task.sleep(for: .milliseconds(1)) }
            // "a" holds its key and waits: "b" must still run at once.
            let other = await coalescer.run("b") { 2 }
            #expect(other == (2, false))
            release.yield()
        }
    }

    /// Many callers on one key, in waves: at no time do two of them work at once, and every
    /// caller returns (a follower that finds its leader gone leads instead of waiting).
    @Test func underContentionAKeyHasOneWorkerAtATimeAndEveryCallerReturns() async {
        let coalescer = RequestCoalescer<String, Int>()
        let active = Counter()
        let most = Counter()
        let answered = await withTaskGroup(of: Int.self) { group in
            for caller in 0..<400 {
                group.addTask {
                    let (value, _) = await coalescer.run("k") {
                        let now = active.value.withLock { $0 += 1; return $0 }
                        most.value.withLock { $0 = max($0, now) }
                        if caller % 3 == 0 { await Task.yield() }
                        active.value.withLock { $0 -= 1 }
                        return caller
                    }
                    return value
                }
            }
            return await group.reduce(into: 0) { count, _ in count += 1 }
        }
        #expect(answered == 400)
        #expect(most.current == 1)
        #expect(coalescer.followerCount == 0)
    }
}
