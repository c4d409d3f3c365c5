/// Receiving with a deadline, for loops that must also act when nothing
/// arrives (heartbeats, liveness checks).
extension ZMQSocketLoop {
    /// The next message, or nil when none came within `timeout` (nil: wait
    /// as long as it takes). Same errors as `receive()`.
    ///
    /// A message already received is returned at once. Otherwise this is built
    /// on `receive()` and its cancellation, which never loses a message: a
    /// timer and a receive race, the loser is cancelled, and a message the
    /// receive got at the very moment the timer fired is returned, not dropped.
    /// (The race costs two child tasks and a timer: loops that take every
    /// request off a socket receive without a time-out, or hand each message
    /// to a handler on the socket's thread, as the pool worker does.)
    public func receive(timeout: Duration?) async throws -> [[UInt8]]? {
        guard let timeout else { return try await receive() }
        if let message = takeBuffered() { return message }
        return try await withThrowingTaskGroup(of: [[UInt8]]?.self) { group in
            group.addTask { try await self.receive() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.nextResult()
            group.cancelAll()
            let second = await group.nextResult()
            let results = [first, second].compactMap { $0 }
            for case .success(let message?) in results { return message }
            for case .failure(let error) in results where !(error is CancellationError) { throw error }
            try Task.checkCancellation()
            return nil
        }
    }

    /// The oldest message already received, without waiting; nil when none is.
    func takeBuffered() -> [[UInt8]]? {
        locked.withLock { state in
            guard let (message, wake) = state.machine.takeBuffered() else { return nil }
            if wake { state.wake() }
            return message
        }
    }
}
