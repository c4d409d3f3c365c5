import CurlHTTPTestSupport
import NIOCore
import NIOPosix
import Synchronization

/// A bare HTTP/1.1 server on 127.0.0.1 that keeps each request's header block
/// exactly as it came on the wire, and answers `417 Expectation Failed` to a
/// request with any `Expect` header, as Node's HTTP server and proxies that
/// follow RFC 9110 do. Hummingbird (TestServer) would hide the raw headers.
final class StrictWireServer: Sendable {
    let port: Int
    private let heads = Mutex<[String]>([])

    private init(port: Int) {
        self.port = port
    }

    var url: String { "http://127.0.0.1:\(port)/verifyReceipt" }

    /// The header blocks received so far, in order.
    var receivedHeads: [String] { heads.withLock { $0 } }

    /// Runs a server around `body`, closing it whether `body` returned or threw.
    static func with<T: Sendable>(_ body: (StrictWireServer) async throws -> T) async throws -> T {
        let server = Mutex<StrictWireServer?>(nil)
        let record: @Sendable (String) -> Void = { head in server.withLock { $0?.heads.withLock { $0.append(head) } } }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StrictHTTPHandler(record: record))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let running = StrictWireServer(port: channel.localAddress?.port ?? 0)
        server.withLock { $0 = running }
        let result: Result<T, any Error>
        do { result = .success(try await body(running)) } catch { result = .failure(error) }
        try await channel.close()
        return try result.get()
    }
}

/// One request per connection: reads the head (and the body its
/// Content-Length announces), records the head, answers, closes.
private final class StrictHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var received = ""
    private var answered = false
    private let record: @Sendable (String) -> Void

    init(record: @escaping @Sendable (String) -> Void) {
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += String(buffer: unwrapInboundIn(data))
        guard !answered, let end = received.range(of: "\r\n\r\n") else { return }
        let head = String(received[..<end.lowerBound])
        let lines = head.split(separator: "\r\n").map { $0.lowercased() }
        let expects = lines.contains { $0.hasPrefix("expect:") }
        let length = lines.first { $0.hasPrefix("content-length:") }.flatMap { Int($0.dropFirst(15).filter { $0 != " " }) } ?? 0
        // A client that sent Expect waits for an answer before its body: answer at once.
        guard expects || received.utf8.count - head.utf8.count - 4 >= length else { return }
        answered = true
        record(head)
        let body = expects ? "" : #"{"status": 0}"#
        let status = expects ? "417 Expectation Failed" : "200 OK"
        let answer = "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer))).whenComplete { _ in channel.close(promise: nil) }
    }
}
