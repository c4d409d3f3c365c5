/// Who hears how a queued message fared: a `send` waiting for libzmq to take
/// it, or, for `post`, nobody but an optional failure handler.
enum SendCompletion: Sendable {
    case waiter(CheckedContinuation<Void, any Error>)
    case posted(onFailure: (@Sendable (any Error) -> Void)?)

    /// libzmq took the message.
    func succeed() {
        if case .waiter(let continuation) = self { continuation.resume() }
    }

    func fail(_ error: any Error) {
        switch self {
        case .waiter(let continuation): continuation.resume(throwing: error)
        case .posted(let onFailure): onFailure?(error)
        }
    }
}
