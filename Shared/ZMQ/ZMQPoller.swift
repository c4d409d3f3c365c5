import CZeroMQ

/// `zmq_poll` over sockets and plain file descriptors, always with a finite
/// time-out (a thread blocked forever cannot notice it should stop).
public enum ZMQPoller {
    public enum Item {
        case socket(ZMQSocket, readable: Bool, writable: Bool)
        case fileDescriptor(Int32)
    }

    /// Which items are ready, as (readable, writable) in the items' order.
    public static func poll(_ items: [Item], timeoutMilliseconds: Int) throws(ZMQError) -> [(readable: Bool, writable: Bool)] {
        precondition(timeoutMilliseconds >= 0, "never poll without a time-out")
        var raw = [zmq_pollitem_t]()
        for item in items {
            var entry = zmq_pollitem_t()
            switch item {
            case .socket(let socket, let readable, let writable):
                entry.socket = try socket.open("zmq_poll")
                entry.events = Int16((readable ? ZMQ_POLLIN : 0) | (writable ? ZMQ_POLLOUT : 0))
            case .fileDescriptor(let fd):
                entry.fd = fd
                entry.events = Int16(ZMQ_POLLIN)
            }
            raw.append(entry)
        }
        let count = raw.count
        let result = raw.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, Int32(count), timeoutMilliseconds) }
        if result < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.isInterrupted { return Array(repeating: (false, false), count: count) }
            throw error
        }
        return raw.map { ($0.revents & Int16(ZMQ_POLLIN) != 0, $0.revents & Int16(ZMQ_POLLOUT) != 0) }
    }
}
