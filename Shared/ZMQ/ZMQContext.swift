import CZeroMQ

/// A libzmq context: owns the I/O threads; sockets are made from it.
/// libzmq documents contexts as thread-safe, hence `@unchecked Sendable`.
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    public init(ioThreads: Int32 = 1) {
        // zmq_ctx_new fails only when the process is out of file descriptors or memory.
        guard let handle = zmq_ctx_new() else { preconditionFailure("zmq_ctx_new failed: \(ZMQError.last("zmq_ctx_new"))") }
        zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        self.handle = handle
    }

    /// Makes blocking calls on every socket of this context return ETERM, so
    /// their threads can close them; terminating then completes.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        // Blocks until every socket is closed (their linger honoured).
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}
