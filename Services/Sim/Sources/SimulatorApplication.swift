import AppleJWS
import CurlHTTP
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOSSL
import ServiceLifecycle
import StorekeeperCore

/// Builds the services of `storekeeper-sim`, the local App Store: Apple's
/// verifyReceipt and App Store Server API (production and sandbox, one store
/// and one clock) on `STOREKEEPER_SIM_ADDR` (and over TLS on
/// `STOREKEEPER_SIM_TLS_ADDR` when set), an admin API to mint purchases,
/// drive time and inject faults, server notifications to
/// `STOREKEEPER_SIM_NOTIFICATION_URL` (version 1 or 2), and StoreKit 2 signed
/// transactions for what it sells.
public enum SimulatorApplication {
    public static let executableName = "storekeeper-sim"

    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        let configuration = context.configuration
        let simulator = AppStoreSimulator(
            bundleID: configuration.apple.bundleIDs.first ?? SimulatorSettings.defaultBundleID,
            sharedSecret: configuration.apple.sharedSecret?.revealed,
            appAppleID: configuration.apple.appAppleID ?? SimulatorServerAPIKey.appAppleID,
            pageSize: configuration.simulator.pageSize)
        let client = CurlHTTPClient(logger: context.logger)
        let notifier = SimNotifier(
            simulator: simulator, url: configuration.simulator.notificationURL,
            password: configuration.apple.sharedSecret?.revealed, version: configuration.simulator.notificationVersion,
            transport: { url, body in
                try await client.execute(
                    CurlHTTP.HTTPRequest(method: .post, url: url, headers: [("Content-Type", "application/json")], body: body)
                ).status
            },
            logger: context.logger)
        let address = configuration.simulator.address
        let responder = SimRouter.make(simulator: simulator, notifier: notifier).buildResponder()
        let server = HTTPServerService(
            responder: responder, address: .hostname(address.host, port: address.port), logger: context.logger)
        // The same routes and store over TLS, HTTP/2 or HTTP/1.1 by ALPN: how clients reach Apple's
        // endpoints, so a verifier with STOREKEEPER_APPLE_CA_FILE multiplexes its calls as in production.
        let tls = try configuration.simulator.tlsAddress.map { address in
            HTTPServerService(
                responder: responder, address: .hostname(address.host, port: address.port),
                server: try .http2Upgrade(tlsConfiguration: simulatorTLS()), logger: context.logger)
        }
        context.logger.info(
            "App Store simulator",
            metadata: [
                "sim.address": "\(address)", "sim.tls_address": "\(configuration.simulator.tlsAddress.map { "\($0)" } ?? "off")",
                "sim.bundle_id": "\(simulator.bundleID)",
            ])
        return [client, server] + (tls.map { [$0] } ?? [])
    }

    /// The test certificate (`SimulatorTLSCertificate`) as a server configuration.
    static func simulatorTLS() throws -> TLSConfiguration {
        let certificate = try NIOSSLCertificate(bytes: Array(SimulatorTLSCertificate.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(SimulatorTLSCertificate.privateKeyPEM.utf8), format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
    }
}
