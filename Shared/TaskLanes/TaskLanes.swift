import Synchronization

/// Runs many concurrent child tasks, one per unit of work, spread over a few
/// task groups ("lanes") instead of one.
///
/// Why: the Swift runtime keeps a group's children in a singly linked list
/// and walks it to detach a finished child, so a group holding n children
/// costs O(n) per completion. A verifier with 3,000 Apple calls in flight
/// spent about a tenth of its CPU in that walk (`TaskGroup::removeChildTask`
/// in perf). With `laneCount` lanes each list is n / laneCount long.
///
/// Structured all the same: every child belongs to a lane, every lane to the
/// caller's group. `withTaskLanes` returns only when `body` has returned and
/// every unit it submitted has run. An error thrown by `body`, or cancellation
/// of the caller, cancels them all; units submitted after that are refused.
///
/// ```swift
/// try await withTaskLanes(count: 32, perform: { request in await serve(request) }) { lanes in
///     for try await request in incoming { lanes.submit(request) }
/// }
/// ```
public struct TaskLanes<Work: Sendable>: Sendable {
    private let inboxes: [AsyncStream<Work>.Continuation]
    private let next = Turn()

    fileprivate init(inboxes: [AsyncStream<Work>.Continuation]) {
        self.inboxes = inboxes
    }

    /// Starts `perform(work)` as a child task of the next lane (round robin).
    /// Never suspends. Returns false, and `work` never runs, when the lanes
    /// have stopped: after `withTaskLanes`'s body returned or was cancelled.
    @discardableResult
    public func submit(_ work: Work) -> Bool {
        if case .terminated = inboxes[next.take(modulo: inboxes.count)].yield(work) { return false }
        return true
    }

    fileprivate func close() {
        for inbox in inboxes { inbox.finish() }
    }
}

/// Runs `body` with `count` lanes that run `perform` for each unit it
/// submits; see `TaskLanes`.
public func withTaskLanes<Work: Sendable, Value: Sendable>(
    count: Int,
    perform: @escaping @Sendable (Work) async -> Void,
    body: (TaskLanes<Work>) async throws -> Value
) async throws -> Value {
    precondition(count > 0, "withTaskLanes needs at least one lane")
    let streams = (0..<count).map { _ in AsyncStream.makeStream(of: Work.self, bufferingPolicy: .unbounded) }
    let lanes = TaskLanes(inboxes: streams.map(\.continuation))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        for (stream, _) in streams {
            group.addTask {
                await withDiscardingTaskGroup { lane in
                    for await work in stream {
                        lane.addTask { await perform(work) }
                    }
                }
            }
        }
        // Closing the inboxes lets each lane finish once its children have.
        defer { lanes.close() }
        return try await body(lanes)
    }
}

/// A round-robin counter shared by the tasks that submit.
private final class Turn: Sendable {
    private let counter = Atomic<UInt>(0)

    func take(modulo count: Int) -> Int {
        Int(counter.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(count))
    }
}
