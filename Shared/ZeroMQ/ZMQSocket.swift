import CZeroMQ

/// One libzmq socket.
///
/// Not `Sendable`: libzmq sockets are not thread-safe. A socket is used by one
/// thread, or by several whose uses a lock keeps apart (the full memory
/// barrier libzmq asks for). To use one from async code, let a
/// `ZMQSocketLoop` own it.
///
/// Every call is a plain libzmq call on the current thread; the blocking ones
/// (`send` and `receive` without `dontWait`) must not run on Swift's
/// cooperative pool.
public final class ZMQSocket {
    /// The linger every new socket starts with, in milliseconds. libzmq's own
    /// default is infinite, which makes `zmq_ctx_term` (and so process exit)
    /// hang while a vanished peer still has messages queued; a second is
    /// enough for a live peer to take what was sent just before closing.
    public static let defaultLingerMilliseconds = 1_000

    public let type: ZMQSocketType
    /// Kept so the context outlives its sockets: its `deinit` waits for them.
    private let context: ZMQContext
    private var handle: UnsafeMutableRawPointer?

    public init(context: ZMQContext, type: ZMQSocketType) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else { throw .last("zmq_socket") }
        self.handle = handle
        self.type = type
        self.context = context
        try setLinger(milliseconds: Self.defaultLingerMilliseconds)
    }

    deinit { close() }

    /// Closes the socket. Messages already sent keep going out in libzmq's I/O
    /// thread for the linger time. Idempotent; later calls on the socket throw
    /// `ENOTSOCK`.
    public func close() {
        guard let handle else { return }
        zmq_close(handle)
        self.handle = nil
    }

    /// Whether `close()` has not been called yet.
    public var isOpen: Bool { handle != nil }

    /// The raw socket for a libzmq call, or `ENOTSOCK` once closed.
    func open(_ operation: @autoclosure () -> String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(code: ENOTSOCK, operation: operation()) }
        return handle
    }

    // MARK: Endpoints

    /// Binds to an endpoint such as `tcp://127.0.0.1:*` (any free port: read
    /// `lastEndpoint()` afterwards), `tcp://0.0.0.0:5555` or `inproc://name`.
    public func bind(_ endpoint: String) throws(ZMQError) {
        guard zmq_bind(try open("zmq_bind"), endpoint) == 0 else { throw .last("zmq_bind", endpoint: endpoint) }
    }

    /// Connects to an endpoint. libzmq connects (and reconnects) in the
    /// background: this succeeds before the peer exists.
    public func connect(_ endpoint: String) throws(ZMQError) {
        guard zmq_connect(try open("zmq_connect"), endpoint) == 0 else {
            throw .last("zmq_connect", endpoint: endpoint)
        }
    }

    /// Stops listening on an endpoint given to `bind` (the resolved form from
    /// `lastEndpoint()` when the port was `*`).
    public func unbind(_ endpoint: String) throws(ZMQError) {
        guard zmq_unbind(try open("zmq_unbind"), endpoint) == 0 else { throw .last("zmq_unbind", endpoint: endpoint) }
    }

    /// Drops a connection made by `connect`.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        guard zmq_disconnect(try open("zmq_disconnect"), endpoint) == 0 else {
            throw .last("zmq_disconnect", endpoint: endpoint)
        }
    }

    /// The endpoint last bound or connected, resolved: `tcp://127.0.0.1:41234`
    /// after binding `tcp://127.0.0.1:*`.
    public func lastEndpoint() throws(ZMQError) -> String {
        let bytes = try bytesOption(ZMQ_LAST_ENDPOINT, "ZMQ_LAST_ENDPOINT", capacity: 1_024)
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The TCP port of `lastEndpoint()`, or nil when it is not a TCP endpoint.
    public func lastEndpointPort() throws(ZMQError) -> Int? {
        Self.tcpPort(of: try lastEndpoint())
    }

    /// The port of a `tcp://host:port` endpoint (IPv6 hosts in brackets work too).
    public static func tcpPort(of endpoint: String) -> Int? {
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else { return nil }
        guard let port = Int(endpoint[endpoint.index(after: colon)...]), (1...65_535).contains(port) else { return nil }
        return port
    }

    // MARK: Readiness

    /// What the socket can do right now without blocking (`ZMQ_EVENTS`).
    /// Reading it also makes libzmq process pending commands, which is why
    /// loops read it before they wait.
    public var events: ZMQEvents {
        get throws(ZMQError) { ZMQEvents(rawValue: Int16(truncatingIfNeeded: try intOption(ZMQ_EVENTS, "ZMQ_EVENTS"))) }
    }

    /// The descriptor libzmq signals on (`ZMQ_FD`) for polling with plain
    /// `poll`. It becomes readable when the socket's events *may* have
    /// changed, and any call on the socket may consume that signal: read
    /// `events` after each wake-up, and before each wait.
    public var signalDescriptor: Int32 {
        get throws(ZMQError) { Int32(try intOption(ZMQ_FD, "ZMQ_FD")) }
    }
}

/// A socket is not safe to share without a lock; this keeps anyone from declaring otherwise.
@available(*, unavailable)
extension ZMQSocket: Sendable {}
