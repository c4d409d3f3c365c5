import Foundation
import ProcessSpawn
import Testing

@Suite struct SpawnedProcessStopTests {
    /// Children that ignore SIGTERM hold their supervisors for the whole grace period. Stopped
    /// from cancelled tasks, one per thread of the pool, the waits must still leave the threads
    /// to other tasks: a task that sleeps briefly finishes before any stop does.
    @Test func stoppingChildrenFromCancelledTasksLeavesThePoolFree() async throws {
        let stoppers = ProcessInfo.processInfo.activeProcessorCount
        let ready = AsyncStream<Void>.makeStream()
        let children = try (0..<stoppers).map { _ in
            try SpawnedProcess(
                path: "/bin/sh", arguments: ["-c", "trap '' TERM; echo ready; exec sleep 60"], environment: [:],
                onOutput: { _ in ready.continuation.yield() })
        }
        var readiness = ready.stream.makeAsyncIterator()
        for _ in children { await readiness.next() }
        // Results come in the order the tasks finished.
        let finished = await withTaskGroup(of: (name: String, status: Int32?).self) { group in
            for child in children {
                group.addTask {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return ("stop", await child.stop(grace: .seconds(15)))  // long: a loaded pool is slow to run the probe
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(100))
                return ("probe", 0)
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(finished.first?.name == "probe")
        // Each child ignored SIGTERM and had to be killed.
        #expect(finished.filter { $0.name == "stop" && $0.status == nil }.count == stoppers)
        #expect(children.allSatisfy { !$0.isRunning })
    }
}
