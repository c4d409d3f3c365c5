import Foundation
import Testing

/// Slow-loris clients: connections that send half a request and stall are
/// closed after the read time-out, and meanwhile everyone else is served.
@Suite("Slow clients are cut off", .serialized)
struct SlowClientTests {
    @Test func stalledHeadersAndBodiesAreClosedWhileOthersAreServed() async throws {
        let ledger = try await LedgerProcess()
        let port = try GatewayProcess.reservePort()
        let gateway = try await GatewayProcess(
            port: port, ledger: ledger, extraEnvironment: ["STOREKEEPER_HTTP_READ_TIMEOUT_MS": "1000"])
        do {
            try await gateway.waitUntilLive()
            let stalls = [
                "POST /v1/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n",  // headers never end
                "POST /v1/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{\"user_id\":",  // body stalls
            ]
            // Fifty of each, all open at once.
            let sockets = try (0..<100).map { try SlowSocket(port: port, sending: stalls[$0 % 2]) }
            let served = try await gateway.call("GET", "/healthz")
            #expect(served.status == 200, "a stalled crowd must not block others")
            // One deadline for all (bounded): they were cut off together.
            var open = sockets
            for _ in 0..<150 where !open.isEmpty {
                try await Task.sleep(for: .milliseconds(100))
                open.removeAll(where: \.isClosed)
            }
            #expect(open.isEmpty, "\(open.count) stalled connections stayed open")
        } catch {
            Issue.record("\(error)")
        }
        #expect(await gateway.stop() == 0)
        #expect(await ledger.stop() == 0)
    }
}

/// A TCP connection to the gateway that sends a prefix of a request and then nothing.
final class SlowSocket {
    let fd: Int32

    struct ConnectFailed: Error {}

    init(port: Int, sending prefix: String) throws {
        // Close-on-exec: a process another test starts meanwhile must not inherit this connection.
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw ConnectFailed()
        }
        _ = Array(prefix.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    deinit { close(fd) }

    /// Whether the gateway closed it (what it sent before closing is read and dropped), without
    /// waiting: a blocking read would hold one of the few threads every suite's tasks share.
    var isClosed: Bool {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { continue }
            // 0: closed; an error other than "nothing yet" (a reset) is closed too.
            return count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
        }
    }
}
