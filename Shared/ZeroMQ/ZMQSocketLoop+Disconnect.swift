/// Dropping one connection of a running loop's socket.
extension ZMQSocketLoop {
    /// Drops the connection `configure` made to `endpoint` (`zmq_disconnect`):
    /// libzmq stops reconnecting to it, and later messages go to the socket's
    /// other peers only.
    ///
    /// With `discardingQueued`, the socket's linger becomes 0 first, so the
    /// messages libzmq still holds for that peer are dropped with the
    /// connection instead of being flushed to whoever answers at that address
    /// for up to the linger time. The linger is the socket's: it also applies
    /// to its other connections and to its close, so this is for a socket
    /// about to stop.
    ///
    /// Runs the libzmq calls on the caller's thread with the loop's lock held,
    /// like a direct `send`. Throws `Closed` when the loop is not serving its
    /// socket (not started yet, or stopped), and libzmq's `ENOENT` for an
    /// endpoint the socket is not connected to.
    public func disconnect(_ endpoint: String, discardingQueued: Bool = false) throws {
        try locked.withLock { state throws in
            guard let socket = state.socket?.socket else { throw Closed() }
            // Any call on the socket may take the ZMQ_FD signal the thread waits for: wake it either way.
            defer { state.wake() }
            if discardingQueued { try socket.setLinger(milliseconds: 0) }
            try socket.disconnect(endpoint)
        }
    }
}
