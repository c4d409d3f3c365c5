import CZeroMQ

/// `zmq_poll` over sockets and plain file descriptors.
///
/// Always with a finite time-out: a thread blocked forever cannot notice that
/// it should stop, so callers loop and re-check their state instead.
public enum ZMQPoller {
    public enum Item {
        /// A socket and what to wait for on it.
        case socket(ZMQSocket, ZMQEvents)
        /// A file descriptor (a pipe, a TCP socket) and what to wait for on it.
        case fileDescriptor(Int32, ZMQEvents)
    }

    /// Waits until one item is ready or `timeoutMilliseconds` pass (0: just
    /// look). Returns what each item is ready for, in the items' order; all
    /// empty on time-out, or when a signal interrupted the wait.
    ///
    /// A negative time-out (libzmq's "forever") is a programming error.
    public static func poll(_ items: [Item], timeoutMilliseconds: Int) throws(ZMQError) -> [ZMQEvents] {
        precondition(timeoutMilliseconds >= 0, "ZMQPoller.poll: never poll without a time-out")
        var raw: [zmq_pollitem_t] = []
        raw.reserveCapacity(items.count)
        for item in items {
            var entry = zmq_pollitem_t()
            switch item {
            case .socket(let socket, let interest):
                entry.socket = try socket.open("zmq_poll")
                entry.events = interest.rawValue
            case .fileDescriptor(let fd, let interest):
                entry.fd = fd
                entry.events = interest.rawValue
            }
            raw.append(entry)
        }
        let count = Int32(raw.count)
        let result = raw.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, count, timeoutMilliseconds) }
        if result < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.isInterrupted { return Array(repeating: [], count: raw.count) }
            throw error
        }
        return raw.map { ZMQEvents(rawValue: $0.revents) }
    }
}
