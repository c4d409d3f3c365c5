import Synchronization

/// The endpoint a socket bound, as ZeroMQ reports it (with the real port when
/// bound to port 0), set on the socket's thread and read from anywhere.
public final class BoundEndpoint: Sendable {
    private let endpoint = Mutex<String?>(nil)

    public init() {}

    public func set(_ value: String) { endpoint.withLock { $0 = value } }

    public var value: String? { endpoint.withLock { $0 } }
}
