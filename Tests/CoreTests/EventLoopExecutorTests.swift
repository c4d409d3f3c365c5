import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import StorekeeperCore
import Testing

/// Each test installs a global executor, which a process can do once: each runs in a child process.
@Suite("EventLoopExecutor: global jobs on the event loops, nonisolated calls without a loop turn")
struct EventLoopExecutorTests {
    /// Nested calls through a function with an `isolated` parameter, as the server's code makes
    /// them (withTaskCancellationHandler, the async sequences' `next(isolation:)`, ...): on the way
    /// in and back out, the task hops to the generic executor. A task already on it goes straight
    /// on; a task that is not is enqueued again and waits for a loop turn.
    static func nested(_ depth: Int) async -> Int {
        guard depth > 0 else { return 0 }
        return await withTaskCancellationHandler { await nested(depth - 1) + 1 } onCancel: {}
    }

    /// The loop's tasks (jobs run) while a task makes those calls, counted by the loop itself.
    static func loopTasksForNestedCalls(install: (MultiThreadedEventLoopGroup) -> Bool) async -> Int {
        let counter = TaskCounter()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1, metricsDelegate: counter)
        guard install(group) else { exit(3) }
        _ = await Task.detached { await nested(10) }.value  // warm up
        let before = await counter.settled()
        guard before > 0 else { exit(5) }  // the count sees the loop's tasks
        let depth = await Task.detached { await nested(200) }.value
        guard depth == 200 else { exit(4) }
        return await counter.settled() - before
    }

    final class TaskCounter: NIOEventLoopMetricsDelegate {
        let tasks = NIOLockedValueBox(0)
        func processedTick(info: NIOEventLoopTickInfo) { tasks.withLockedValue { $0 += info.numberOfTasks } }

        /// The count once the loop has reported the ticks that ran the work: a loop reports a tick
        /// when it ends, so a read inside a tick misses it. Read after pauses until a pause adds
        /// no more than its own wake-up (a task or two); a read too early could only be low. Bounded.
        func settled() async -> Int {
            var last = 0
            for _ in 0..<100 {
                try? await Task.sleep(for: .milliseconds(20))
                let now = tasks.withLockedValue { $0 }
                if now > 0, now - last <= 2 { return now }
                last = now
            }
            return last
        }
    }

    @Test func aTaskMakesNestedNonisolatedCallsWithoutALoopTurnEach() async {
        await #expect(processExitsWith: .success) {
            let tasks = await EventLoopExecutorTests.loopTasksForNestedCalls { EventLoopExecutor.install(on: $0) }
            // Starting the task and resuming the awaiting one: a handful, whatever the depth.
            exit(tasks < 20 ? 0 : 1)
        }
    }

    @Test func jobsRunOnTheGroupsLoop() async {
        await #expect(processExitsWith: .success) {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            guard EventLoopExecutor.install(on: group) else { exit(3) }
            let onLoop = await Task.detached { MultiThreadedEventLoopGroup.currentEventLoop != nil }.value
            exit(onLoop ? 0 : 1)
        }
    }
}
