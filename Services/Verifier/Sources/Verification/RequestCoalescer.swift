import Synchronization

/// Identical requests being verified at the same time share one Apple call:
/// the first caller for a key does the work, later ones wait for its result.
final class RequestCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let waiting = Mutex<[Key: [CheckedContinuation<Value?, Never>]]>([:])

    /// Callers waiting for another's call to finish, over every key.
    var followerCount: Int { waiting.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Runs `work` unless the same key is in flight; returns its result and whether it was shared.
    func run(_ key: Key, _ work: () async -> Value) async -> (Value, shared: Bool) {
        // Deciding who leads and joining happen under one lock, so no follower is ever left behind.
        let shared = await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            let leads = waiting.withLock { waiting -> Bool in
                if waiting[key] != nil {
                    waiting[key]?.append(continuation)
                    return false
                }
                waiting[key] = []
                return true
            }
            if leads { continuation.resume(returning: nil) }
        }
        if let shared { return (shared, true) }
        let value = await work()
        let followers = waiting.withLock { $0.removeValue(forKey: key) ?? [] }
        for follower in followers { follower.resume(returning: value) }
        return (value, false)
    }
}
