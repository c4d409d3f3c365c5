import CZeroMQ

/// One libzmq socket. Not Sendable: libzmq sockets are not thread-safe, so a
/// socket is created, used and closed on one thread (see `ZMQSocketLoop`).
public final class ZMQSocket {
    private(set) var handle: UnsafeMutableRawPointer?
    public let type: ZMQSocketType

    public init(context: ZMQContext, type: ZMQSocketType) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else { throw .last("zmq_socket") }
        self.handle = handle
        self.type = type
    }

    deinit { close() }

    /// Closes the socket (pending outgoing messages are kept for the linger time). Idempotent.
    public func close() {
        guard let handle else { return }
        zmq_close(handle)
        self.handle = nil
    }

    func open(_ operation: String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(operation: operation, code: ENOTSOCK) }
        return handle
    }

    public func bind(_ endpoint: String) throws(ZMQError) {
        guard zmq_bind(try open("zmq_bind"), endpoint) == 0 else { throw .last("zmq_bind \(endpoint)") }
    }

    public func connect(_ endpoint: String) throws(ZMQError) {
        guard zmq_connect(try open("zmq_connect"), endpoint) == 0 else { throw .last("zmq_connect \(endpoint)") }
    }

    public func unbind(_ endpoint: String) throws(ZMQError) {
        guard zmq_unbind(try open("zmq_unbind"), endpoint) == 0 else { throw .last("zmq_unbind \(endpoint)") }
    }

    public func disconnect(_ endpoint: String) throws(ZMQError) {
        guard zmq_disconnect(try open("zmq_disconnect"), endpoint) == 0 else { throw .last("zmq_disconnect \(endpoint)") }
    }

    /// Sends all frames as one multipart message. Returns false when
    /// `dontWait` and the socket would block (HWM reached); nothing is sent then.
    @discardableResult
    public func send(_ frames: [[UInt8]], dontWait: Bool = false) throws(ZMQError) -> Bool {
        let socket = try open("zmq_send")
        precondition(!frames.isEmpty, "a ZeroMQ message has at least one frame")
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = index < frames.count - 1 ? ZMQ_SNDMORE : 0
            if dontWait { flags |= ZMQ_DONTWAIT }
            while true {
                let sent = frame.withUnsafeBytes { zmq_send(socket, $0.baseAddress, $0.count, flags) }
                if sent >= 0 { break }
                let error = ZMQError.last("zmq_send")
                if error.isInterrupted { continue }
                // Only the first frame can would-block: libzmq accepts the rest of a started message.
                if error.isWouldBlock && index == 0 { return false }
                throw error
            }
        }
        return true
    }

    /// Receives one whole multipart message; nil when `dontWait` and none is waiting.
    public func receive(dontWait: Bool = false) throws(ZMQError) -> [[UInt8]]? {
        let socket = try open("zmq_msg_recv")
        // zmq_msg_t must not move while libzmq uses it: keep it in allocated memory.
        let message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
        defer { message.deallocate() }
        var frames: [[UInt8]] = []
        var more = true
        while more {
            zmq_msg_init(message)
            defer { zmq_msg_close(message) }
            let flags: Int32 = dontWait && frames.isEmpty ? ZMQ_DONTWAIT : 0
            while zmq_msg_recv(message, socket, flags) < 0 {
                let error = ZMQError.last("zmq_msg_recv")
                if error.isInterrupted { continue }
                if error.isWouldBlock && frames.isEmpty { return nil }
                throw error
            }
            let size = zmq_msg_size(message)
            if size == 0 {
                frames.append([])
            } else {
                let data = zmq_msg_data(message)!.assumingMemoryBound(to: UInt8.self)
                frames.append(Array(UnsafeBufferPointer(start: data, count: size)))
            }
            more = zmq_msg_more(message) == 1
        }
        return frames
    }

    /// What the socket can do right now without blocking.
    public var events: (readable: Bool, writable: Bool) {
        let value = (try? intOption(ZMQ_EVENTS)) ?? 0
        return (value & Int32(ZMQ_POLLIN) != 0, value & Int32(ZMQ_POLLOUT) != 0)
    }
}
