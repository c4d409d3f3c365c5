import CZeroMQ

/// Typed socket options. Times are in milliseconds, as libzmq takes them.
extension ZMQSocket {
    func setIntOption(_ option: Int32, _ value: Int32) throws(ZMQError) {
        var value = value
        guard zmq_setsockopt(try open("zmq_setsockopt"), option, &value, MemoryLayout<Int32>.size) == 0 else {
            throw .last("zmq_setsockopt \(option)")
        }
    }

    func intOption(_ option: Int32) throws(ZMQError) -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(try open("zmq_getsockopt"), option, &value, &size) == 0 else {
            throw .last("zmq_getsockopt \(option)")
        }
        return value
    }

    func setBytesOption(_ option: Int32, _ bytes: [UInt8]) throws(ZMQError) {
        let socket = try open("zmq_setsockopt")
        let result = bytes.withUnsafeBytes { zmq_setsockopt(socket, option, $0.baseAddress, $0.count) }
        guard result == 0 else { throw .last("zmq_setsockopt \(option)") }
    }

    func bytesOption(_ option: Int32, capacity: Int = 256) throws(ZMQError) -> [UInt8] {
        let socket = try open("zmq_getsockopt")
        var buffer = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        let result = buffer.withUnsafeMutableBytes { zmq_getsockopt(socket, option, $0.baseAddress, &size) }
        guard result == 0 else { throw .last("zmq_getsockopt \(option)") }
        return Array(buffer.prefix(size))
    }

    /// Messages queued per peer before the socket blocks (or drops, for PUB).
    public func setSendHighWaterMark(_ messages: Int32) throws(ZMQError) { try setIntOption(ZMQ_SNDHWM, messages) }
    public func sendHighWaterMark() throws(ZMQError) -> Int32 { try intOption(ZMQ_SNDHWM) }
    public func setReceiveHighWaterMark(_ messages: Int32) throws(ZMQError) { try setIntOption(ZMQ_RCVHWM, messages) }
    public func receiveHighWaterMark() throws(ZMQError) -> Int32 { try intOption(ZMQ_RCVHWM) }

    /// How long close keeps unsent messages (-1 forever, 0 drop at once).
    public func setLinger(milliseconds: Int32) throws(ZMQError) { try setIntOption(ZMQ_LINGER, milliseconds) }
    public func linger() throws(ZMQError) -> Int32 { try intOption(ZMQ_LINGER) }

    /// ZMTP heartbeats: a PING every `interval`; the connection drops when nothing arrives for `timeout`.
    public func setHeartbeat(intervalMilliseconds interval: Int32, timeoutMilliseconds timeout: Int32, ttlMilliseconds ttl: Int32)
        throws(ZMQError)
    {
        try setIntOption(ZMQ_HEARTBEAT_IVL, interval)
        try setIntOption(ZMQ_HEARTBEAT_TIMEOUT, timeout)
        try setIntOption(ZMQ_HEARTBEAT_TTL, ttl)
    }
    public func heartbeatInterval() throws(ZMQError) -> Int32 { try intOption(ZMQ_HEARTBEAT_IVL) }

    /// Reconnect back-off: starts at `interval`, doubles up to `maximum` (0: no doubling).
    public func setReconnect(intervalMilliseconds interval: Int32, maximumMilliseconds maximum: Int32) throws(ZMQError) {
        try setIntOption(ZMQ_RECONNECT_IVL, interval)
        try setIntOption(ZMQ_RECONNECT_IVL_MAX, maximum)
    }
    public func reconnectInterval() throws(ZMQError) -> Int32 { try intOption(ZMQ_RECONNECT_IVL) }

    public func setReceiveTimeout(milliseconds: Int32) throws(ZMQError) { try setIntOption(ZMQ_RCVTIMEO, milliseconds) }
    public func setSendTimeout(milliseconds: Int32) throws(ZMQError) { try setIntOption(ZMQ_SNDTIMEO, milliseconds) }

    /// The identity a ROUTER peer sees for this socket (set before connect).
    public func setRoutingID(_ id: [UInt8]) throws(ZMQError) { try setBytesOption(ZMQ_ROUTING_ID, id) }
    public func routingID() throws(ZMQError) -> [UInt8] { try bytesOption(ZMQ_ROUTING_ID) }

    /// ROUTER: fail (EHOSTUNREACH) instead of silently dropping a message to an unknown peer.
    public func setRouterMandatory(_ on: Bool) throws(ZMQError) { try setIntOption(ZMQ_ROUTER_MANDATORY, on ? 1 : 0) }

    /// Queue messages only to completed connections.
    public func setImmediate(_ on: Bool) throws(ZMQError) { try setIntOption(ZMQ_IMMEDIATE, on ? 1 : 0) }

    /// SUB: receive messages whose first frame starts with `prefix` ("" for all).
    public func subscribe(_ prefix: String) throws(ZMQError) { try setBytesOption(ZMQ_SUBSCRIBE, Array(prefix.utf8)) }
    public func unsubscribe(_ prefix: String) throws(ZMQError) { try setBytesOption(ZMQ_UNSUBSCRIBE, Array(prefix.utf8)) }

    /// The endpoint actually bound, e.g. `tcp://127.0.0.1:41234` after binding port `*`.
    public func lastEndpoint() throws(ZMQError) -> String {
        let bytes = try bytesOption(ZMQ_LAST_ENDPOINT)
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}
