import CZeroMQ

/// What a socket can do without blocking: the answer of `ZMQ_EVENTS` (and
/// the flags `zmq_poll` takes and returns).
public struct ZMQEvents: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int16

    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// A whole message can be received (`ZMQ_POLLIN`).
    public static let readable = ZMQEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent (`ZMQ_POLLOUT`).
    public static let writable = ZMQEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a plain file descriptor (`ZMQ_POLLERR`); never set for sockets.
    public static let error = ZMQEvents(rawValue: Int16(ZMQ_POLLERR))

    public var description: String {
        var names: [String] = []
        if contains(.readable) { names.append("readable") }
        if contains(.writable) { names.append("writable") }
        if contains(.error) { names.append("error") }
        return "[\(names.joined(separator: ", "))]"
    }
}
