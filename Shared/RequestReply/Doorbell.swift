import Synchronization

/// Wakes one waiting task: a ring while nobody waits is kept for the next wait.
public final class Doorbell: Sendable {
    private struct State: ~Copyable {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    public func ring() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter.take() else {
                state.rung = true
                return nil
            }
            return waiter
        }?.resume()
    }

    /// Returns at the next ring, after `limit` at the latest, or at once when cancelled.
    public func wait(upTo limit: Duration) async {
        await wait(until: .now + limit)
    }

    /// Returns at the next ring, at `deadline` if there is one (with none, no
    /// timer runs at all), or at once when cancelled.
    public func wait(until deadline: ContinuousClock.Instant?) async {
        await withTaskGroup(of: Void.self) { group in
            // The timer rings too; cancelled (with the waiting task), it rings at once.
            if let deadline {
                group.addTask {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    self.ring()
                }
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state -> Bool in
                        if state.rung {
                            state.rung = false
                            return true
                        }
                        state.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                // Without a timer nothing else would end the wait.
                self.ring()
            }
            group.cancelAll()
        }
        // A ring from the cancelled timer (or cancellation) must not count for the next wait.
        state.withLock { $0.rung = false }
    }
}
