import CZeroMQ

/// `zmq_poll` over plain file descriptors: a self-pipe and the descriptors
/// sockets signal on (`ZMQSocket.signalDescriptor`). Socket loops wait on
/// those rather than on the sockets, so that no socket is inside a libzmq call
/// while a loop waits (others may use it under the loop's lock meanwhile).
///
/// A wait with no time-out ends only when a descriptor becomes readable: a
/// loop that waits so must have every reason to wake (a message, a send, a
/// stop, the context's shutdown) signal one of its descriptors.
public enum ZMQPoller {
    /// Waits until one descriptor is readable or `timeoutMilliseconds` pass
    /// (0: just look; nil: no time-out). Returns, in order, whether each one is
    /// readable; all false on time-out, or when a signal interrupted the wait.
    ///
    /// A negative time-out is a programming error: nil says "no time-out".
    public static func readable(_ descriptors: [Int32], timeoutMilliseconds: Int?) throws(ZMQError) -> [Bool] {
        if let timeoutMilliseconds { precondition(timeoutMilliseconds >= 0, "ZMQPoller.readable: negative time-out") }
        var raw = descriptors.map { descriptor in
            var entry = zmq_pollitem_t()
            entry.fd = descriptor
            entry.events = ZMQEvents.readable.rawValue
            return entry
        }
        let count = Int32(raw.count)
        let result = raw.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, count, timeoutMilliseconds ?? -1) }
        if result < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.isInterrupted { return Array(repeating: false, count: raw.count) }
            throw error
        }
        return raw.map { ZMQEvents(rawValue: $0.revents).contains(.readable) }
    }
}
