import CZeroMQ

/// Multipart messages: a message is a non-empty list of frames, delivered
/// whole or not at all. Frames are `[UInt8]`; empty frames are allowed.
extension ZMQSocket {
    /// Sends `frames` as one message.
    ///
    /// With `dontWait`, returns false (sending nothing) when the socket would
    /// block: its high-water mark is reached or, for some types, no peer is
    /// connected yet. Without it, blocks until the message is queued or the
    /// send time-out expires (then also false).
    ///
    /// Throws `EINVAL` for an empty list of frames.
    @discardableResult
    public func send(_ frames: [[UInt8]], dontWait: Bool = false) throws(ZMQError) -> Bool {
        let socket = try open("zmq_send")
        guard !frames.isEmpty else { throw ZMQError(code: EINVAL, operation: "zmq_send") }
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            let flags = (index < last ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
            while frame.withUnsafeBytes({ zmq_send(socket, $0.baseAddress, $0.count, flags) }) < 0 {
                let error = ZMQError.last("zmq_send")
                if error.isInterrupted { continue }
                // libzmq checks the high-water mark on a message's first frame
                // only; once that is taken, the rest of the message is too.
                if error.isWouldBlock && index == 0 { return false }
                throw error
            }
        }
        return true
    }

    /// Receives all frames of the next message.
    ///
    /// Returns nil when `dontWait` and no message is waiting, or when the
    /// receive time-out expires. Without `dontWait` and without a time-out it
    /// blocks until a message arrives or the context is shut down (`ETERM`).
    public func receive(dontWait: Bool = false) throws(ZMQError) -> [[UInt8]]? {
        let socket = try open("zmq_msg_recv")
        // zmq_msg_t must stay where libzmq put it (zmq_msg_data may point into
        // it), so it lives in allocated memory, never in a Swift var.
        let message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
        defer { message.deallocate() }
        let flags = dontWait ? ZMQ_DONTWAIT : 0
        var frames: [[UInt8]] = []
        var more = true
        while more {
            zmq_msg_init(message)
            defer { zmq_msg_close(message) }
            while zmq_msg_recv(message, socket, flags) < 0 {
                let error = ZMQError.last("zmq_msg_recv")
                if error.isInterrupted { continue }
                // Parts arrive together, so only a message's first frame can be missing.
                if error.isWouldBlock && frames.isEmpty { return nil }
                throw error
            }
            let size = zmq_msg_size(message)
            if size == 0 {
                frames.append([])
            } else {
                let data = UnsafeRawPointer(zmq_msg_data(message)!)
                frames.append(Array(UnsafeRawBufferPointer(start: data, count: size)))
            }
            more = zmq_msg_more(message) == 1
        }
        return frames
    }
}
