import CZeroMQ

/// `zmq_setsockopt` / `zmq_getsockopt` for the two shapes Storekeeper needs:
/// C `int` and byte strings. The typed options in `ZMQSocket+Options.swift`
/// are built on these; `name` only labels errors, and the label is built only
/// for an error: `ZMQ_EVENTS` is read on every send and receive, and building
/// it each time cost about 2,000 instructions (callgrind).
extension ZMQSocket {
    func setIntOption(_ option: Int32, _ name: String, _ value: Int) throws(ZMQError) {
        let operation = { "zmq_setsockopt(\(name))" }
        guard var raw = Int32(exactly: value) else { throw ZMQError(code: EINVAL, operation: operation()) }
        let socket = try open(operation())
        guard zmq_setsockopt(socket, option, &raw, MemoryLayout<Int32>.size) == 0 else { throw .last(operation()) }
    }

    func intOption(_ option: Int32, _ name: String) throws(ZMQError) -> Int {
        let operation = { "zmq_getsockopt(\(name))" }
        let socket = try open(operation())
        var raw: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(socket, option, &raw, &size) == 0 else { throw .last(operation()) }
        return Int(raw)
    }

    func setBytesOption(_ option: Int32, _ name: String, _ bytes: [UInt8]) throws(ZMQError) {
        let operation = { "zmq_setsockopt(\(name))" }
        let socket = try open(operation())
        let result = bytes.withUnsafeBytes { zmq_setsockopt(socket, option, $0.baseAddress, $0.count) }
        guard result == 0 else { throw .last(operation()) }
    }

    func bytesOption(_ option: Int32, _ name: String, capacity: Int = 256) throws(ZMQError) -> [UInt8] {
        let operation = { "zmq_getsockopt(\(name))" }
        let socket = try open(operation())
        var buffer = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        let result = buffer.withUnsafeMutableBytes { zmq_getsockopt(socket, option, $0.baseAddress, &size) }
        guard result == 0 else { throw .last(operation()) }
        return Array(buffer.prefix(size))
    }
}
