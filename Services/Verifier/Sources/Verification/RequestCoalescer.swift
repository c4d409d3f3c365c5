import Synchronization

/// Identical requests being verified at the same time share one Apple call:
/// the first caller for a key does the work, later ones wait for its result.
final class RequestCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let waiting = Mutex<[Key: [CheckedContinuation<Value?, Never>]]>([:])

    /// Callers waiting for another's call to finish, over every key.
    var followerCount: Int { waiting.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Runs `work` unless the same key is in flight; returns its result and whether it was shared.
    /// A caller that leads (nearly every one) takes the key without suspending: a suspension here
    /// cost every verification a trip through its executor's queue.
    func run(_ key: Key, _ work: () async -> Value) async -> (Value, shared: Bool) {
        if !waiting.withLock({ Self.lead(key, in: &$0) }), let shared = await follow(key) {
            return (shared, true)
        }
        let value = await work()
        let followers = waiting.withLock { $0.removeValue(forKey: key) ?? [] }
        for follower in followers { follower.resume(returning: value) }
        return (value, false)
    }

    /// Waits for the leader's value; nil when the leader finished before this caller could join
    /// (it then leads). Joining and that check happen under one lock: no follower is left behind.
    private func follow(_ key: Key) async -> Value? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            let joined = waiting.withLock { waiting -> Bool in
                guard !Self.lead(key, in: &waiting) else { return false }
                waiting[key]?.append(continuation)
                return true
            }
            if !joined { continuation.resume(returning: nil) }
        }
    }

    /// Takes `key` when nobody holds it.
    private static func lead(_ key: Key, in waiting: inout [Key: [CheckedContinuation<Value?, Never>]]) -> Bool {
        guard waiting[key] == nil else { return false }
        waiting[key] = []
        return true
    }
}
