import AppleFormats
import Contracts
import CurlHTTP
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StorekeeperCore

/// `POST /v1/receipts` the way the asyncio peer does it, built from the
/// libraries Storekeeper's three processes use, in one process: Hummingbird
/// (`HTTPServerService`) in, libcurl (`CurlHTTPClient`) to Apple, Apple's
/// answer read by `JSONValueParser` and `ReceiptNormalizer`, SQLite through
/// GRDB in WAL with `synchronous=FULL` and grouped commits, the answer written
/// by `JSONEncoder`.
///
/// It is the floor under Storekeeper's CPU per verification: the work no
/// design of the stack can drop (serve the HTTP request, call Apple, read its
/// answer, commit the grants, answer), with nothing Storekeeper adds (API
/// keys, receipt repair, retries, policy, events) and no process hop. What
/// Storekeeper spends above it is the price of its design; what a target asks
/// below it, no design built on these libraries reaches. The benchmark runs it
/// as one more contender (`storekeeper-bench-stack --peers`, `swift_floor`).
///
/// Configured like the peers, read as every service reads them
/// (`StorekeeperConfiguration`): STOREKEEPER_HTTP_ADDR, STOREKEEPER_DATA_DIR,
/// STOREKEEPER_APPLE_PRODUCTION_URL, STOREKEEPER_APPLE_SANDBOX_URL,
/// STOREKEEPER_APPLE_SHARED_SECRET, STOREKEEPER_BUNDLE_IDS,
/// STOREKEEPER_APPLE_CA_FILE.
enum FloorServer {
    static func runFromEnvironment() async throws {
        OpenFileLimit.raiseForConnections()
        let configuration = try StorekeeperConfiguration(reader: EnvironmentReader())
        let address = configuration.gateway.httpAddress
        let logger = Logger(label: "storekeeper.bench.floor")
        let client = CurlHTTPClient(
            configuration: .init(
                maxConcurrentTransfers: 16_384, maxConnectionsPerHost: 16_384,
                caFile: configuration.apple.caFile),
            logger: logger)
        let grants = try FloorGrants(directory: configuration.ledger.dataDirectory)
        let handler = FloorReceiptHandler(apple: configuration.apple, client: client, grants: grants)
        let router = Router()
        router.post("/v1/receipts") { request, _ in try await handler.answer(request) }
        router.get("/readyz") { _, _ in Response(status: .ok) }
        let server = HTTPServerService(
            responder: router.buildResponder(), address: .hostname(address.host, port: address.port), logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [client, server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
