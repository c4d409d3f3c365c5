/// What became of a request put in to wait for its answer (`PendingRequests.wait`).
public enum RequestAdmission: Equatable, Sendable {
    /// It waits. `wakeTimer`: its deadline comes before the timer loop's
    /// alarm, so the client must wake the loop (`TimerLoop.wake()`).
    case waiting(wakeTimer: Bool)
    /// The client has stopped: the request fails at once.
    case refused
    /// Its task was cancelled before it came to wait: it fails at once with `CancellationError`.
    case cancelled
}
