import Synchronization
import Testing

import TaskLanes

@Suite struct TaskLanesTests {
    @Test func everyUnitRunsOnceAndTheCallReturnsAfterTheLast() async throws {
        let seen = Mutex<[Int]>([])
        let count = try await withTaskLanes(count: 8, perform: { (unit: Int) in
            await Task.yield()  // a suspension: the lane must still wait for it
            seen.withLock { $0.append(unit) }
        }) { lanes in
            for unit in 0..<1_000 { lanes.submit(unit) }
            return 1_000
        }
        #expect(seen.withLock { $0.sorted() } == Array(0..<count))
    }

    @Test func unitsRunConcurrentlyWithinALane() async throws {
        // 50 units on 2 lanes: each waits until all 50 have started, which
        // only happens if a lane runs its units at once, not one by one.
        let started = Atomic(0)
        let sawAll = Atomic(0)
        try await withTaskLanes(count: 2, perform: { (_: Int) in
            started.add(1, ordering: .relaxed)
            for _ in 0..<5_000 where started.load(ordering: .relaxed) < 50 {
                try? await Task.sleep(for: .milliseconds(1))
            }
            if started.load(ordering: .relaxed) == 50 { sawAll.add(1, ordering: .relaxed) }
        }) { lanes in
            for unit in 0..<50 { lanes.submit(unit) }
        }
        #expect(sawAll.load(ordering: .relaxed) == 50)
    }

    @Test func anErrorFromTheBodyCancelsTheUnitsAndIsRethrown() async throws {
        struct Stop: Error {}
        let started = Atomic(0)
        let cancelled = Atomic(0)
        await #expect(throws: Stop.self) {
            try await withTaskLanes(count: 4, perform: { (_: Int) in
                started.add(1, ordering: .relaxed)
                try? await Task.sleep(for: .seconds(60))
                if Task.isCancelled { cancelled.add(1, ordering: .relaxed) }
            }) { lanes in
                for unit in 0..<20 { lanes.submit(unit) }
                for _ in 0..<5_000 where started.load(ordering: .relaxed) < 20 {
                    try await Task.sleep(for: .milliseconds(1))
                }
                throw Stop()
            }
        }
        #expect(started.load(ordering: .relaxed) == 20)
        #expect(cancelled.load(ordering: .relaxed) == 20)
    }

    @Test func unitsSubmittedAfterCancellationAreRefused() async throws {
        let refused = Atomic(false)
        let task = Task {
            try await withTaskLanes(count: 2, perform: { (_: Int) in }) { lanes in
                withUnsafeCurrentTask { $0?.cancel() }
                // The lanes see the cancellation as they next wait for work; until then submits are taken.
                for _ in 0..<100_000 where !refused.load(ordering: .relaxed) {
                    if lanes.submit(1) { await Task.yield() } else { refused.store(true, ordering: .relaxed) }
                }
            }
        }
        _ = try? await task.value
        let wasRefused = refused.load(ordering: .relaxed)
        #expect(wasRefused)
    }
}
