/// Runs a loop that reads or writes a socket loop until cancelled: once its
/// task is cancelled (a service shutting down), what the loop throws (the
/// socket closing under it, `CancellationError`) is the expected end, not a
/// failure to report; before that, errors go through.
public func endingQuietlyOnCancellation(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        if Task.isCancelled { return }
        throw error
    }
}
