import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOSSL
import ServiceLifecycle
import StorekeeperCore

/// A Hummingbird server on 127.0.0.1 and a port the kernel picks, for the
/// client to talk to. This file alone imports Hummingbird, whose re-exported
/// `HTTPRequest`/`HTTPResponse` (swift-http-types) would shadow CurlHTTP's.
///
/// Routes:
/// - `POST /echo`, `PUT /echo`: the body back, its length in `X-Echo-Length`
///   and the method in `X-Echo-Method`.
/// - `GET /slow?ms=N`: answers after N ms (default 1000).
/// - `GET /hang`: counts the arrival (and its connection) at `gate`, answers once the gate opens.
/// - `GET /big?bytes=N&chunked=1`: N bytes of `x`, with a length or chunked.
/// - `GET /status/:code`: that status, with `Retry-After: 7`.
/// - `GET /peer`: the client's source port (one per TCP connection).
public struct TestServer: Sendable {
    public let port: Int
    public let gate: Gate
    public let tls: Bool

    public func url(_ path: String) -> String { "\(tls ? "https" : "http")://127.0.0.1:\(port)\(path)" }

    /// Runs a server around `body`, then opens the gate and shuts the server
    /// down gracefully, whether `body` returned or threw. With `tls`, it
    /// speaks TLS with storekeeper-sim's test certificate and then HTTP/2 or
    /// HTTP/1.1 by ALPN, as `storekeeper-sim` does on `STOREKEEPER_SIM_TLS_ADDR`.
    public static func with<T: Sendable>(tls: Bool = false, _ body: (TestServer) async throws -> T) async throws -> T {
        let gate = Gate()
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router(gate: gate),
            server: tls ? try .http2Upgrade(tlsConfiguration: simulatorTLS()) : .http1(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), backlog: 4096),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: .quiet
        )
        let services = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: .quiet))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { portContinuation.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let result: Result<T, any Error>
            if port > 0 {
                do { result = .success(try await body(TestServer(port: port, gate: gate, tls: tls))) } catch { result = .failure(error) }
            } else {
                result = .failure(TestFailure("the test server did not start"))
            }
            gate.open()
            await services.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try result.get()
        }
    }

    /// storekeeper-sim's test certificate and key.
    private static func simulatorTLS() throws -> TLSConfiguration {
        let certificate = try NIOSSLCertificate(bytes: Array(SimulatorTLSCertificate.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(SimulatorTLSCertificate.privateKeyPEM.utf8), format: .pem)
        return .makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
    }

    private static func router(gate: Gate) -> Router<PeerContext> {
        let router = Router(context: PeerContext.self)
        for method in [HTTPRequest.Method.post, .put] {
            router.on("/echo", method: method) { request, _ -> Response in
                var request = request
                let body = try await request.collectBody(upTo: 1 << 20)
                return Response(
                    status: .ok,
                    headers: [.init("X-Echo-Length")!: "\(body.readableBytes)", .init("X-Echo-Method")!: request.method.rawValue],
                    body: .init(byteBuffer: body))
            }
        }
        router.get("/slow") { request, _ -> String in
            let milliseconds = request.uri.queryParameters.get("ms", as: Int.self) ?? 1_000
            try await Task.sleep(for: .milliseconds(milliseconds))
            return "slow"
        }
        router.get("/hang") { _, context -> String in
            await gate.pass(peer: context.peerPort)
            return "released"
        }
        router.get("/big") { request, _ -> Response in
            let count = request.uri.queryParameters.get("bytes", as: Int.self) ?? 65_536
            let buffer = ByteBuffer(repeating: UInt8(ascii: "x"), count: count)
            guard request.uri.queryParameters.get("chunked") == "1" else {
                return Response(status: .ok, body: .init(byteBuffer: buffer))
            }
            return Response(status: .ok, body: ResponseBody { writer in
                try await writer.write(buffer)
                try await writer.finish(nil)
            })
        }
        router.get("/status/:code") { _, context -> Response in
            let code = try context.parameters.require("code", as: Int.self)
            return Response(status: .init(code: code), headers: [.retryAfter: "7"])
        }
        router.get("/peer") { _, context -> String in
            "\(context.peerPort ?? -1)"
        }
        return router
    }
}

/// A request context that remembers the client's source port.
struct PeerContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let peerPort: Int?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerPort = source.channel.remoteAddress?.port
    }
}
