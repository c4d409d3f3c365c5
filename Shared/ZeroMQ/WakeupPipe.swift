#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A self-pipe that lets async code wake a socket thread waiting in
/// `poll`: the read end is polled beside the socket, and any task writes a
/// byte to the other. Both ends are non-blocking and close-on-exec (the CLI
/// starts child processes, which must not inherit them). A class, so the
/// descriptors stay open while any party may still write.
final class WakeupPipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(ZMQError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw ZMQError(code: errno, operation: "pipe") }
        // (Glibc's module does not export pipe2, which would set these atomically.)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Makes the read end readable. Never blocks: a full pipe already holds a wake-up.
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the read end, so the next `poll` waits again.
    func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let size = MemoryLayout.size(ofValue: buffer)
        while withUnsafeMutableBytes(of: &buffer, { read(readEnd, $0.baseAddress, size) }) > 0 {}
    }
}
