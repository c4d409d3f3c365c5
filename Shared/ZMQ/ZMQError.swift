import CZeroMQ

/// A failed libzmq call: the operation and libzmq's errno.
public struct ZMQError: Error, Equatable, CustomStringConvertible {
    public let operation: String
    public let code: Int32

    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// The error of the libzmq call that just failed on this thread.
    static func last(_ operation: String) -> ZMQError {
        ZMQError(operation: operation, code: zmq_errno())
    }

    public var description: String {
        "\(operation): \(String(cString: zmq_strerror(code)))"
    }

    /// The socket would block (HWM reached, nothing to read) in non-blocking mode.
    public var isWouldBlock: Bool { code == EAGAIN }
    /// The context was shut down: the socket must be closed.
    public var isTerminated: Bool { code == ETERM }
    public var isInterrupted: Bool { code == EINTR }
}
