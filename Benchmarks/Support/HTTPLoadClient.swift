// A small HTTP/1.1 load generator on SwiftNIO: keep-alive connections, one
// request at a time on each, as many connections as requests in flight. Cheap
// enough per request that it is not what a benchmark measures (compare its
// figures against the simulator alone: the ceiling).
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

public struct HTTPExchangeResult: Sendable {
    public let status: Int
    public let body: ByteBuffer
}

public final class HTTPLoadClient: Sendable {
    private let group: any EventLoopGroup
    private let host: String
    private let port: Int
    /// Kept-alive connections and when each went idle, the most recent last.
    private let idle = Mutex<[(channel: any Channel, since: ContinuousClock.Instant)]>([])
    /// Connections idle longer are closed instead of reused: the gateway closes idle ones after
    /// 10 s, and a request written as it does so fails with a read error, not a refused write.
    private static let maxIdle: Duration = .seconds(5)
    /// How long an exchange waits for its answer before it closes the connection and
    /// fails (`NoAnswerInTime`). A server at its open-file limit can leave connections
    /// in its listen queue, completed by the kernel and never accepted: without this,
    /// their requests, and the whole run, would wait forever. Far past any answer a
    /// scenario expects: Apple's slowest is 6 s, and backlogged steps' medians reach 11 s.
    private let answerTimeout: TimeAmount

    /// - Parameter group: where the connections live. NIO's singleton by
    ///   default: with it installed as Swift's global executor too, a request's
    ///   task and its connection share the event loops, and an answer wakes one
    ///   thread instead of two (a fifth off the generator's CPU per request in
    ///   the open loop).
    public init(
        host: String, port: Int, group: any EventLoopGroup = NIOSingletons.posixEventLoopGroup,
        answerTimeout: TimeAmount = .seconds(60)
    ) {
        self.group = group
        self.answerTimeout = answerTimeout
        self.host = host
        self.port = port
    }

    /// Sends one request on an idle keep-alive connection (or a new one) and waits for the whole answer.
    public func send(_ method: HTTPMethod, _ path: String, json body: ByteBuffer) async throws -> HTTPExchangeResult {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: "\(host):\(port)")
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        do {
            return try await exchange(head, body, on: try await connection())
        } catch is StaleConnection {
            // The server closed the kept-alive connection while it was idle (the gateway closes idle
            // ones), before this request went out: once more, on a new connection.
            return try await exchange(head, body, on: try await newConnection())
        }
    }

    /// The write was refused before the request went out: the connection was closed.
    struct StaleConnection: Error {}

    /// No answer within `answerTimeout`; the connection was closed.
    public struct NoAnswerInTime: Error {}

    private func exchange(_ head: HTTPRequestHead, _ body: ByteBuffer, on channel: any Channel) async throws -> HTTPExchangeResult {
        let promise = channel.eventLoop.makePromise(of: HTTPExchangeResult.self)
        // A refused write never reaches the handler: it must end the exchange, or the exchange waits forever.
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { _ in promise.fail(StaleConnection()) }
        channel.writeAndFlush(Exchange(head: head, body: body, promise: promise), promise: written)
        // On the channel's loop, as the handler's own errors: it fails the exchange and closes.
        let timeout = channel.eventLoop.scheduleTask(in: answerTimeout) {
            channel.pipeline.fireErrorCaught(NoAnswerInTime())
        }
        defer { timeout.cancel() }
        let result = try await promise.futureResult.get()
        if channel.isActive { idle.withLock { $0.append((channel, .now)) } }
        return result
    }

    /// Closes the kept-alive connections. The event-loop group is the caller's.
    public func shutdown() async {
        let channels = idle.withLock { channels in
            defer { channels = [] }
            return channels
        }
        for (channel, _) in channels { try? await channel.close() }
    }

    private func connection() async throws -> any Channel {
        while let (channel, since) = idle.withLock({ $0.popLast() }) {
            if channel.isActive, ContinuousClock.now - since < Self.maxIdle { return channel }
            channel.close(promise: nil)
        }
        return try await newConnection()
    }

    private func newConnection() async throws -> any Channel {
        try await ClientBootstrap(group: group)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                }
            }
            .connect(host: host, port: port).get()
    }
}

/// One request and where its answer goes.
struct Exchange: Sendable {
    let head: HTTPRequestHead
    let body: ByteBuffer
    let promise: EventLoopPromise<HTTPExchangeResult>
}

/// Writes an `Exchange` as HTTP parts and completes its promise with the answer.
/// Lives on its channel's event loop only.
final class ExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Exchange
    typealias OutboundOut = HTTPClientRequestPart

    private var pending: EventLoopPromise<HTTPExchangeResult>?
    private var status = 0
    private var body = ByteBuffer()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        pending = exchange.promise
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(exchange.body))), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            body.clear()
        case .body(var bytes):
            body.writeBuffer(&bytes)
        case .end:
            let promise = pending
            pending = nil
            promise?.succeed(HTTPExchangeResult(status: status, body: body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        pending?.fail(error)
        pending = nil
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending?.fail(ChannelError.ioOnClosedChannel)
        pending = nil
        context.fireChannelInactive()
    }
}
