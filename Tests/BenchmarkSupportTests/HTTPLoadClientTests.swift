import BenchmarkSupport
import Glibc
import NIOCore
import Testing

@Suite struct HTTPLoadClientTests {
    /// A server at its open-file limit leaves connections in its listen queue: the
    /// kernel completes them, nobody accepts them. Such an exchange must end.
    @Test func anExchangeNobodyAnswersFailsAfterItsTimeout() async throws {
        let listener = try ListeningSocket()
        defer { close(listener.descriptor) }
        let client = HTTPLoadClient(host: "127.0.0.1", port: listener.port, answerTimeout: .milliseconds(200))
        await #expect(throws: HTTPLoadClient.NoAnswerInTime.self) {
            _ = try await client.send(.POST, "/v1/receipts", json: ByteBuffer(string: "{}"))
        }
        await client.shutdown()
    }

    /// A loopback TCP socket that listens and never accepts.
    struct ListeningSocket {
        let descriptor: Int32
        let port: Int

        struct Failed: Error { let call: String, errno: Int32 }

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failed(call: "socket", errno: errno) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(fd, generic, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, generic, &length) == 0
                }
            }
            guard bound else {
                let failure = Failed(call: "bind/listen", errno: errno)
                close(fd)
                throw failure
            }
            descriptor = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }
    }
}
