import CZeroMQ

/// A libzmq context: it owns the I/O threads, and every socket is made from one.
///
/// `@unchecked Sendable` because libzmq documents contexts as thread-safe
/// (unlike sockets), and the handle never changes after `init`.
///
/// Every `ZMQSocket` (and `ZMQSocketLoop`) keeps its context alive, so the
/// `deinit` here runs only after all of them are closed; `zmq_ctx_term` then
/// waits at most for their linger. Release the last reference outside the
/// cooperative pool when sockets may still linger (it blocks for that long).
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    /// - Parameter ioThreads: libzmq's background I/O threads (one handles
    ///   about a gigabyte per second; more are rarely needed).
    public init(ioThreads: Int = 1) {
        precondition(ioThreads >= 1 && ioThreads <= 64, "ZMQContext(ioThreads:) must be in 1...64, got \(ioThreads)")
        // zmq_ctx_new fails only when the process is out of file descriptors or memory.
        guard let handle = zmq_ctx_new() else { preconditionFailure("\(ZMQError.last("zmq_ctx_new"))") }
        // Must be set before the first socket exists; it cannot fail for a valid count.
        zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(ioThreads))
        self.handle = handle
    }

    /// Makes every blocking call on this context's sockets, in any thread,
    /// return `ETERM` (and new sockets fail), so their owners close them.
    /// Idempotent. Socket loops treat it as a stop.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        // Waits until every socket is closed and its linger has passed.
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}
