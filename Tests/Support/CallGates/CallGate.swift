import Synchronization

/// Holds calls until `open()`, so a test knows which calls are in flight
/// without waiting for time to pass. Only the first `holding` calls are held;
/// later ones go through, so a call that should never have been made shows
/// up as a wrong answer rather than a hang (`holding: 0`: an open gate).
public final class CallGate: Sendable {
    private struct State {
        var open = false
        var left: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    public init(holding: Int = .max) {
        state = Mutex(State(left: holding))
    }

    /// Calls held at the gate now.
    public var waiting: Int { state.withLock { $0.waiting.count } }

    /// Returns at once when the gate is open or has held its share, else when it opens.
    public func pass() async {
        await withCheckedContinuation { continuation in
            let held = state.withLock { state -> Bool in
                guard !state.open, state.left > 0 else { return false }
                state.left -= 1
                state.waiting.append(continuation)
                return true
            }
            if !held { continuation.resume() }
        }
    }

    /// Lets every held call go, and every later one.
    public func open() {
        let held = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for caller in held { caller.resume() }
    }
}
