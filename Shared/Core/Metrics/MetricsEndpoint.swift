import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// `GET /metrics` in Prometheus text format on its own address, for the
/// processes that have no HTTP server of their own (verifier, ledger, sim).
public struct MetricsEndpoint: Service {
    private let server: HTTPServerService<RouterResponder<BasicRequestContext>>

    public init(address: SocketAddress, registry: PrometheusCollectorRegistry, logger: Logger) {
        let router = Router()
        router.get("/metrics") { _, _ in Self.response(registry) }
        server = HTTPServerService(
            responder: router.buildResponder(), address: .hostname(address.host, port: address.port), logger: logger)
    }

    /// The registry in Prometheus text format, for any router that serves `/metrics`.
    public static func response(_ registry: PrometheusCollectorRegistry) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }

    public func run() async throws {
        try await server.run()
    }
}
