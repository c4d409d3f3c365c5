import AppleFormats
import AppleJWS
import CallGates
import Contracts
import CurlHTTP
import Foundation
import InMemoryLogging
import Logging
import ServiceLifecycle
import StorekeeperCore
import Synchronization
import Testing

@testable import Simulator
@testable import Verifier

/// The simulator on 127.0.0.1 and a running curl client, around a test body:
/// clients of the Server API made here talk to the simulator over real HTTP,
/// with the simulator's test key and its signing chain trusted. Every request
/// a client sends is kept (`sent`), and every notification the simulator
/// delivers (`delivered`), so tests see what went over the wire.
struct ServerAPIHarness: Sendable {
    let simulator: AppStoreSimulator
    /// Delivers what the simulator's changes cause, as its admin routes do.
    let notifier: SimNotifier
    let base: String
    let curl: CurlHTTPClient
    let clock: TestClock
    let sent: Recorded<CurlHTTP.HTTPRequest>
    let delivered: Recorded<[UInt8]>
    /// What the clients made here logged.
    let logs = InMemoryLogHandler()

    static let bundleID = "com.example.storekeeper"
    /// The simulator's verifyReceipt checks it (subscriptions), as Apple's does.
    static let sharedSecret = "harness-shared-secret"

    /// The simulator's credentials, as `storekeeper up --sim` gives them to the verifiers.
    static func credentials(key: ServerAPISigningKey? = nil) throws -> ServerAPICredentials {
        ServerAPICredentials(
            issuerID: SimulatorServerAPIKey.issuerID, keyID: SimulatorServerAPIKey.keyID, bundleID: bundleID,
            signingKey: try key ?? ServerAPISigningKey(pem: SimulatorServerAPIKey.privateKeyPEM))
    }

    /// A client of the simulator. `attemptTimeout` ends a hung call; `deadline` every call (both
    /// generous: under a loaded machine a slow answer must not become a retry a test did not expect).
    /// Its requests wait at `gate`, when there is one, once recorded in `sent`.
    func client(
        key: ServerAPISigningKey? = nil, appAppleID: Int64 = SimulatorServerAPIKey.appAppleID, acceptSandbox: Bool = true,
        trustSimulator: Bool = true, attemptTimeout: Duration = .seconds(10), deadline: Duration = .seconds(30),
        gate: CallGate? = nil
    ) throws -> AppStoreServerClient {
        let configuration = ServerAPIClientConfiguration(
            productionURL: base + "/production", sandboxURL: base + "/sandbox", credentials: try Self.credentials(key: key),
            appAppleID: appAppleID, connectTimeout: .seconds(2), attemptTimeout: attemptTimeout, deadline: deadline,
            acceptSandbox: acceptSandbox)
        let (curl, sent) = (self.curl, self.sent)
        return AppStoreServerClient(
            configuration: configuration, reader: try reader(acceptSandbox: acceptSandbox, trustSimulator: trustSimulator), logger: Logger(label: "server-api-test") { [logs] _ in logs },
            clock: clock.now,
            backoff: Backoff(base: .milliseconds(5), cap: .milliseconds(20))
        ) { request throws(HTTPClientError) in
            sent.append(request)
            await gate?.pass()
            return try await curl.execute(request)
        }
    }

    /// The verifier's StoreKit 2 reader: Apple's roots (and the simulator's), this app's bundle.
    func reader(acceptSandbox: Bool = true, trustSimulator: Bool = true) throws -> SignedDataReader {
        let roots = try SignedDataVerifier.appleRoots(
            extraRootsPEM: trustSimulator ? [SimulatorSigningChain.rootCertificatePEM] : [])
        return SignedDataReader(
            verifier: SignedDataVerifier(trustedRoots: roots), bundleIDs: [Self.bundleID], acceptSandbox: acceptSandbox)
    }

    /// The messages logged at `level` so far.
    func logged(_ level: Logger.Level) -> [String] {
        logs.entries.filter { $0.level == level }.map(\.message.description)
    }

    /// The URLs sent so far, without the base (`/production/inApps/v1/...`).
    var paths: [String] { sent.all.map { String($0.url.dropFirst(base.count)) } }

    /// The `Authorization` header of every request sent so far.
    var tokens: [String] {
        sent.all.compactMap { request in request.headers.first { $0.name == "Authorization" }?.value }
    }

    func buy(
        _ product: String = "com.example.pro.monthly", type: SimProductType = .autoRenewable,
        environment: PurchaseRequest.Environment = .sandbox, account: String = "buyer"
    ) throws -> SimStore.Purchase {
        try simulator.purchase(PurchaseRequest(account: account, productID: product, type: type, environment: environment))
    }

    func faults(_ environment: AppleEnvironment, _ plan: ServerAPIFaultPlan) {
        simulator.setServerAPIFaults(plan, for: environment)
    }

    static func with<T: Sendable>(pageSize: Int = 2, _ body: (ServerAPIHarness) async throws -> T) async throws -> T {
        let quiet = Logger(label: "server-api-test") { _ in SwiftLogNoOpLogHandler() }
        let simulator = AppStoreSimulator(bundleID: bundleID, sharedSecret: sharedSecret, pageSize: pageSize)
        let clock = TestClock()
        let delivered = Recorded<[UInt8]>()
        // Notifications are delivered to the test, not over the network: the URL only has to be set.
        let notifier = SimNotifier(
            simulator: simulator, url: "http://127.0.0.1:9/notifications", password: nil, version: 2,
            transport: { _, body in
                delivered.append(body)
                return 200
            }, logger: quiet)
        let curl = CurlHTTPClient(logger: quiet)
        let group = ServiceGroup(configuration: .init(services: [curl], gracefulShutdownSignals: [], logger: quiet))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let result: Result<T, any Error>
            do {
                result = .success(
                    try await SimServer.with(
                        simulator: simulator, notifier: notifier,
                        tokens: .simulator(bundleID: bundleID, clock: clock.now)
                    ) { port in
                        try await body(
                            ServerAPIHarness(
                                simulator: simulator, notifier: notifier, base: "http://127.0.0.1:\(port)", curl: curl, clock: clock,
                                sent: Recorded(), delivered: delivered))
                    })
            } catch {
                result = .failure(error)
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try result.get()
        }
    }
}

/// What a test saw go by, in order; thread-safe.
final class Recorded<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    func append(_ item: Element) { items.withLock { $0.append(item) } }

    var all: [Element] { items.withLock { $0 } }
}
