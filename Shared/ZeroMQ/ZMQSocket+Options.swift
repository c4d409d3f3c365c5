import CZeroMQ

/// Typed socket options: `setX` writes one, `x()` reads it back. Durations
/// are whole milliseconds, as libzmq takes them (getters too); values outside
/// a C `int` throw `EINVAL`. Set options before `bind` or `connect` unless
/// noted: most apply to connections made afterwards.
extension ZMQSocket {
    // MARK: Queues

    /// Messages queued per peer before sending blocks (or, for PUB and ROUTER, drops). 0: no limit.
    public func sendHighWaterMark() throws(ZMQError) -> Int { try intOption(ZMQ_SNDHWM, "ZMQ_SNDHWM") }
    public func setSendHighWaterMark(_ messages: Int) throws(ZMQError) { try setIntOption(ZMQ_SNDHWM, "ZMQ_SNDHWM", messages) }

    /// Messages queued per peer on the receiving side before the peer is pushed back. 0: no limit.
    public func receiveHighWaterMark() throws(ZMQError) -> Int { try intOption(ZMQ_RCVHWM, "ZMQ_RCVHWM") }
    public func setReceiveHighWaterMark(_ messages: Int) throws(ZMQError) {
        try setIntOption(ZMQ_RCVHWM, "ZMQ_RCVHWM", messages)
    }

    /// How long unsent messages are kept after `close` (-1 forever, 0 drop at
    /// once). New sockets start at `ZMQSocket.defaultLingerMilliseconds`.
    public func linger() throws(ZMQError) -> Int { try intOption(ZMQ_LINGER, "ZMQ_LINGER") }
    public func setLinger(milliseconds: Int) throws(ZMQError) { try setIntOption(ZMQ_LINGER, "ZMQ_LINGER", milliseconds) }

    /// Queue messages only to completed connections (no queueing for a peer still connecting).
    public func isImmediate() throws(ZMQError) -> Bool { try intOption(ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE") != 0 }
    public func setImmediate(_ on: Bool) throws(ZMQError) { try setIntOption(ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE", on ? 1 : 0) }

    // MARK: Blocking time-outs (-1: block forever)

    public func receiveTimeout() throws(ZMQError) -> Int { try intOption(ZMQ_RCVTIMEO, "ZMQ_RCVTIMEO") }
    public func setReceiveTimeout(milliseconds: Int) throws(ZMQError) {
        try setIntOption(ZMQ_RCVTIMEO, "ZMQ_RCVTIMEO", milliseconds)
    }

    public func sendTimeout() throws(ZMQError) -> Int { try intOption(ZMQ_SNDTIMEO, "ZMQ_SNDTIMEO") }
    public func setSendTimeout(milliseconds: Int) throws(ZMQError) { try setIntOption(ZMQ_SNDTIMEO, "ZMQ_SNDTIMEO", milliseconds) }

    // MARK: ZMTP heartbeats (libzmq 4.2+): dead TCP peers are noticed without traffic

    /// A PING every interval; 0 turns heartbeats off.
    public func heartbeatInterval() throws(ZMQError) -> Int {
        try intOption(ZMQ_HEARTBEAT_IVL, "ZMQ_HEARTBEAT_IVL")
    }
    public func setHeartbeatInterval(milliseconds: Int) throws(ZMQError) {
        try setIntOption(ZMQ_HEARTBEAT_IVL, "ZMQ_HEARTBEAT_IVL", milliseconds)
    }

    /// The connection is dropped when nothing arrives this long after a PING.
    public func heartbeatTimeout() throws(ZMQError) -> Int {
        try intOption(ZMQ_HEARTBEAT_TIMEOUT, "ZMQ_HEARTBEAT_TIMEOUT")
    }
    public func setHeartbeatTimeout(milliseconds: Int) throws(ZMQError) {
        try setIntOption(ZMQ_HEARTBEAT_TIMEOUT, "ZMQ_HEARTBEAT_TIMEOUT", milliseconds)
    }

    /// Asks the peer to drop the connection after this long without traffic.
    /// libzmq keeps it in tenths of a second (rounded down), up to 6,553,500.
    public func heartbeatTTL() throws(ZMQError) -> Int {
        try intOption(ZMQ_HEARTBEAT_TTL, "ZMQ_HEARTBEAT_TTL")
    }
    public func setHeartbeatTTL(milliseconds: Int) throws(ZMQError) {
        try setIntOption(ZMQ_HEARTBEAT_TTL, "ZMQ_HEARTBEAT_TTL", milliseconds)
    }

    /// The three heartbeat options at once, e.g. 1 s interval, 3 s time-out and TTL.
    public func setHeartbeat(intervalMilliseconds: Int, timeoutMilliseconds: Int, ttlMilliseconds: Int) throws(ZMQError) {
        try setHeartbeatInterval(milliseconds: intervalMilliseconds)
        try setHeartbeatTimeout(milliseconds: timeoutMilliseconds)
        try setHeartbeatTTL(milliseconds: ttlMilliseconds)
    }

    // MARK: Reconnection back-off (connecting side)

    /// The first wait before reconnecting; -1: never reconnect.
    public func reconnectInterval() throws(ZMQError) -> Int {
        try intOption(ZMQ_RECONNECT_IVL, "ZMQ_RECONNECT_IVL")
    }
    public func setReconnectInterval(milliseconds: Int) throws(ZMQError) {
        try setIntOption(ZMQ_RECONNECT_IVL, "ZMQ_RECONNECT_IVL", milliseconds)
    }

    /// The wait doubles after each failure up to this; 0: no doubling.
    public func reconnectIntervalMax() throws(ZMQError) -> Int {
        try intOption(ZMQ_RECONNECT_IVL_MAX, "ZMQ_RECONNECT_IVL_MAX")
    }
    public func setReconnectIntervalMax(milliseconds: Int) throws(ZMQError) {
        try setIntOption(ZMQ_RECONNECT_IVL_MAX, "ZMQ_RECONNECT_IVL_MAX", milliseconds)
    }

    /// Both reconnect options at once, e.g. 1 s doubling up to 32 s.
    public func setReconnect(intervalMilliseconds: Int, maximumMilliseconds: Int) throws(ZMQError) {
        try setReconnectInterval(milliseconds: intervalMilliseconds)
        try setReconnectIntervalMax(milliseconds: maximumMilliseconds)
    }

    // MARK: Addresses

    /// Whether TCP endpoints may be IPv6. libzmq's default is IPv4 only: a
    /// socket connecting to an IPv6 address (`tcp://[fd00::7]:7421`) needs it.
    /// Set before `bind` or `connect`.
    public func isIPv6() throws(ZMQError) -> Bool { try intOption(ZMQ_IPV6, "ZMQ_IPV6") != 0 }
    public func setIPv6(_ on: Bool) throws(ZMQError) { try setIntOption(ZMQ_IPV6, "ZMQ_IPV6", on ? 1 : 0) }

    // MARK: ROUTER and DEALER

    /// The identity a ROUTER peer sees for this socket: 1 to 255 bytes, not
    /// starting with a zero byte. Set before `connect`.
    public func routingID() throws(ZMQError) -> [UInt8] { try bytesOption(ZMQ_ROUTING_ID, "ZMQ_ROUTING_ID") }
    public func setRoutingID(_ id: [UInt8]) throws(ZMQError) { try setBytesOption(ZMQ_ROUTING_ID, "ZMQ_ROUTING_ID", id) }

    /// ROUTER: a message to an unknown peer throws `EHOSTUNREACH`, and one to a
    /// peer at its high-water mark would block, instead of both being dropped
    /// silently. Write-only in libzmq.
    public func setRouterMandatory(_ on: Bool) throws(ZMQError) {
        try setIntOption(ZMQ_ROUTER_MANDATORY, "ZMQ_ROUTER_MANDATORY", on ? 1 : 0)
    }

    /// ROUTER: a peer connecting with the routing id of a connection still
    /// held takes that id over, instead of being ignored. For peers that set
    /// their id (`setRoutingID`) and reconnect before the old connection is
    /// noticed gone. Write-only in libzmq.
    public func setRouterHandover(_ on: Bool) throws(ZMQError) {
        try setIntOption(ZMQ_ROUTER_HANDOVER, "ZMQ_ROUTER_HANDOVER", on ? 1 : 0)
    }

    // MARK: SUB (any time, also after connect)

    /// Receive messages whose first frame starts with `prefix` (empty: all).
    public func subscribe(_ prefix: [UInt8]) throws(ZMQError) { try setBytesOption(ZMQ_SUBSCRIBE, "ZMQ_SUBSCRIBE", prefix) }
    public func subscribe(_ prefix: String) throws(ZMQError) { try subscribe(Array(prefix.utf8)) }

    /// Undo one `subscribe` with the same prefix.
    public func unsubscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try setBytesOption(ZMQ_UNSUBSCRIBE, "ZMQ_UNSUBSCRIBE", prefix)
    }
    public func unsubscribe(_ prefix: String) throws(ZMQError) { try unsubscribe(Array(prefix.utf8)) }
}
