/// What `task` ended with, or nil when it had not ended after `limit`: a broken rule that hangs
/// becomes a failure, not a run that never ends (a time limit cannot end an await that ignores
/// cancellation). Passing never depends on the limit.
public func outcome<T: Sendable>(of task: Task<T, any Error>, within limit: Duration) async -> Result<T, any Error>? {
    let (ended, signal) = AsyncStream<Result<T, any Error>>.makeStream()
    Task {
        signal.yield(await task.result)
        signal.finish()
    }
    let timer = Task {
        try await Task.sleep(for: limit)
        signal.finish()
    }
    defer { timer.cancel() }
    var iterator = ended.makeAsyncIterator()
    return await iterator.next()
}
