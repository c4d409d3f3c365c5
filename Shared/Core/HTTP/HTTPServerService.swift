import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// Serves a Hummingbird responder (a router) over HTTP/1.1, as a Service.
///
/// Hummingbird's `Application` does the same, and also runs a date-header
/// service through ServiceLifecycle's `cancelOnGracefulShutdown`, that is
/// through swift-async-algorithms' `merge`. That `merge` can deadlock at
/// graceful shutdown (a lock held across a continuation,
/// apple/swift-async-algorithms#430): in the test suite, about one process in
/// several hundred never exited on SIGTERM, both event-loop threads waiting
/// on that lock. This server runs nothing beside the HTTP server: the `Date`
/// header comes from `HTTPDateHeader`.
public struct HTTPServerService<Responder: HTTPResponder>: Service
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    private let responder: Responder
    private let address: BindAddress
    private let server: HTTPServerBuilder
    private let logger: Logger
    private let date: HTTPDateHeader
    private let onServerRunning: (@Sendable (any Channel) async -> Void)?

    /// `onServerRunning` hears the listening channel (its local address holds the port bound for port 0).
    public init(
        responder: Responder, address: BindAddress, server: HTTPServerBuilder = .http1(),
        date: HTTPDateHeader = HTTPDateHeader(), logger: Logger,
        onServerRunning: (@Sendable (any Channel) async -> Void)? = nil
    ) {
        self.responder = responder
        self.onServerRunning = onServerRunning
        self.address = address
        self.server = server
        self.date = date
        self.logger = logger
    }

    public func run() async throws {
        let (responder, date, logger) = (responder, date, logger)
        let respond: HTTPChannelHandler.Responder = { request, writer, channel in
            let context = Responder.Context(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                throw error
            } catch let error as CancellationError {
                // The client went away mid-answer (over HTTP/2, a reset stream or a closed
                // connection cancels its handler): nobody to answer, and nothing went wrong here.
                throw error
            } catch {
                // The router turns errors into responses; one that escapes is a bug, answered as such.
                logger.error("unhandled error while answering a request", metadata: ["error.type": "\(type(of: error))"])
                response = Response(status: .internalServerError)
            }
            response.headers[.date] = date.value
            do {
                try await writer.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // The next request was malformed while this answer was being written. A parser
                // error thrown from here would make the channel write a second answer (400);
                // any other error closes the connection.
                throw ParseErrorWhileWritingResponse()
            }
        }
        try await server.buildServer(
            configuration: ServerConfiguration(address: address, serverName: nil, backlog: listenBacklog),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger,
            responder: respond, onServerRunning: onServerRunning
        ).run()
    }
}

/// The queue of connections the kernel completes before the server accepts
/// them: as long as the system allows (Linux caps it at `net.core.somaxconn`,
/// 4,096 by default). Hummingbird's 256 overflowed whenever new clients came
/// faster than an event loop busy with thousands of connections took them
/// (4 per wake-up): the kernel then drops their handshakes, and each client
/// waits for its retransmission, 1 s later, then 3 s, 7 s (bench/JOURNAL.md,
/// "2026-11-29, 15:40").
private let listenBacklog = 65_535

/// Ends a connection whose next request failed to parse while an answer was being written.
struct ParseErrorWhileWritingResponse: Error {}
