#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A self-pipe that lets async code wake a socket thread blocked in
/// `zmq_poll`: the read end is polled beside the socket.
final class WakeupPipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { preconditionFailure("pipe() failed: out of file descriptors") }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    func wake() {
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up: ignoring EAGAIN loses nothing.
        _ = write(writeEnd, &byte, 1)
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}
