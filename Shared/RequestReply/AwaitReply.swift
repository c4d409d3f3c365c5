/// The waiting half of a request/reply exchange, the same in every client:
/// `admit` puts the caller's continuation in the client's `PendingRequests`
/// (under the client's lock) and, if it waits, wakes the timer and sends;
/// `withdraw` takes it out again when the caller's task is cancelled.
/// A request refused (the client stopped) fails with `refusal`; one cancelled
/// before or while it waits, with `CancellationError`. Every continuation is
/// resumed outside the lock, exactly once: by whoever takes it out of the table.
public func awaitReply<Reply>(
    refusal: any Error,
    admit: (CheckedContinuation<Reply, any Error>) -> RequestAdmission,
    withdraw: @escaping @Sendable () -> CheckedContinuation<Reply, any Error>?
) async throws -> Reply {
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            switch admit(continuation) {
            case .waiting: break
            case .refused: continuation.resume(throwing: refusal)
            case .cancelled: continuation.resume(throwing: CancellationError())
            }
        }
    } onCancel: {
        withdraw()?.resume(throwing: CancellationError())
    }
}
