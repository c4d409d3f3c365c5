/// Runs a loop that reads or writes a socket loop until its service stops.
/// Once its task is cancelled, or its socket loop has closed, what the loop
/// throws (`Closed`, `CancellationError`) is the expected end, not a failure
/// to report. The socket loop's own task is cancelled alongside and may close
/// the socket a moment before this task sees its cancellation, so `Closed` is
/// quiet too: a socket that fails for another reason throws from its own
/// `run()`, which is not wrapped.
public func endingQuietlyOnCancellation(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch is ZMQSocketLoop.Closed {
        return
    } catch {
        if Task.isCancelled { return }
        throw error
    }
}
