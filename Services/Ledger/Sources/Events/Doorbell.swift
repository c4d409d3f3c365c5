import Synchronization

/// Wakes one waiting task: a ring while nobody waits is kept for the next wait.
final class Doorbell: Sendable {
    private struct State: ~Copyable {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter.take() else {
                state.rung = true
                return nil
            }
            return waiter
        }?.resume()
    }

    /// Returns at the next ring, after `limit` at the latest, or at once when cancelled.
    func wait(upTo limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            // The timer rings too; cancelled (with the waiting task), it rings at once.
            group.addTask {
                try? await Task.sleep(for: limit)
                self.ring()
            }
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
            group.cancelAll()
        }
        // A ring from the cancelled timer must not count for the next wait.
        state.withLock { $0.rung = false }
    }
}
