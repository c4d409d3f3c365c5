import CZeroMQ

/// A failed libzmq (or, for the wake-up pipe, POSIX) call.
///
/// It keeps the raw errno because libzmq reports its own codes (`ETERM`,
/// `EFSM`, `EMTHREAD`) through `zmq_errno()` beside the system ones.
/// `description` is short and stable, the operation plus libzmq's text for the
/// code, so it fits a log line or a metric label; the endpoint of a failed
/// bind or connect is kept apart in `endpoint` (log it as metadata).
public struct ZMQError: Error, Equatable, CustomStringConvertible {
    /// The errno value, as `zmq_errno()` reported it.
    public let code: Int32
    /// The call that failed, e.g. `zmq_bind` or `zmq_setsockopt(ZMQ_LINGER)`.
    public let operation: String
    /// The endpoint involved, for bind, connect, unbind and disconnect.
    public let endpoint: String?

    public init(code: Int32, operation: String, endpoint: String? = nil) {
        self.code = code
        self.operation = operation
        self.endpoint = endpoint
    }

    /// The error of the libzmq call that just failed on this thread.
    static func last(_ operation: @autoclosure () -> String, endpoint: String? = nil) -> ZMQError {
        // The code first: building the operation's label may allocate, which may set errno.
        let code = zmq_errno()
        return ZMQError(code: code, operation: operation(), endpoint: endpoint)
    }

    /// libzmq's text for the code (it falls back to `strerror` for system codes).
    public var reason: String { String(cString: zmq_strerror(code)) }

    public var description: String { "\(operation): \(reason)" }

    /// `EAGAIN`: a non-blocking call would block (nothing to read, or the
    /// high-water mark is reached), or a time-out expired.
    public var isWouldBlock: Bool { code == EAGAIN }
    /// `ETERM`: the context was shut down; the socket should be closed.
    public var isTerminated: Bool { code == ETERM }
    /// `EINTR`: a signal interrupted the call; it can be repeated.
    public var isInterrupted: Bool { code == EINTR }

    /// Whether `error` is a `ZMQError` with `EAGAIN`.
    public static func isWouldBlock(_ error: any Error) -> Bool { (error as? ZMQError)?.isWouldBlock ?? false }
    /// Whether `error` is a `ZMQError` with `ETERM`.
    public static func isTerminated(_ error: any Error) -> Bool { (error as? ZMQError)?.isTerminated ?? false }
    /// Whether `error` is a `ZMQError` with `EINTR`.
    public static func isInterrupted(_ error: any Error) -> Bool { (error as? ZMQError)?.isInterrupted ?? false }
}
