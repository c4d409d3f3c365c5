import AppleJWS
import ArgumentParser
import CurlHTTP
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import Verifier
import X509

/// Which App Store Server API the `storekeeper apple` commands call: Apple's,
/// with the `STOREKEEPER_APPLE_*` credentials the verifiers use, or with
/// `--sim` the simulator's (its test key, built in), so the walk-through
/// needs no Apple account.
struct AppleAPITarget: ParsableArguments {
    @Flag(help: "Call storekeeper-sim (STOREKEEPER_SIM_ADDR) with its test key instead of Apple.")
    var sim = false

    @Option(help: "With --sim: the simulator's base URL (default: http://STOREKEEPER_SIM_ADDR; an https:// one is trusted through STOREKEEPER_APPLE_CA_FILE).")
    var simURL: String?

    @Flag(help: "Print the answer as JSON (every JWS decoded, after it verified).")
    var json = false

    /// Runs `body` with a client whose curl loop runs around it, then stops the loop.
    func withClient<T: Sendable>(_ body: (AppStoreServerClient) async throws -> T) async throws -> T {
        let (configuration, reader, caFile) = try settings()
        // Warnings and errors (a refused answer, refused credentials) on standard error, apart from the answer.
        var logger = Logger(label: "storekeeper-apple") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let curl = CurlHTTPClient(
            configuration: .init(maxConcurrentTransfers: 4, maxConnectionsPerHost: 4, caFile: caFile), logger: logger)
        let client = AppStoreServerClient(configuration: configuration, reader: reader, logger: logger) {
            request throws(HTTPClientError) in try await curl.execute(request)
        }
        let group = ServiceGroup(configuration: .init(services: [curl], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let result: Result<T, any Error>
            do { result = .success(try await body(client)) } catch { result = .failure(error) }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return try result.get()
        }
    }

    /// The client's configuration, the reader that checks its answers as the
    /// verifiers do, and the certificates curl trusts (as the verifiers', or
    /// the system's); a configuration error exits 78 naming the variable.
    private func settings() throws -> (ServerAPIClientConfiguration, SignedDataReader, caFile: String?) {
        do {
            let configuration = try StorekeeperConfiguration(reader: EnvironmentReader())
            let apple = configuration.apple
            let caFile = try apple.readableCAFile()
            guard sim else {
                guard let client = try ServerAPIClientConfiguration.load(configuration) else {
                    throw ConfigurationError(
                        variable: ConfigurationVariable.appleIssuerID.rawValue,
                        reason: "the App Store Server API is not configured: set it, STOREKEEPER_APPLE_KEY_ID, STOREKEEPER_APPLE_PRIVATE_KEY_FILE and STOREKEEPER_APPLE_APP_ID (or use --sim)")
                }
                return (client, reader(client, try VerifierApplication.trustedRoots(apple), apple), caFile)
            }
            let base = simURL ?? "http://\(configuration.simulator.address)"
            let client = ServerAPIClientConfiguration(
                productionURL: base + "/production", sandboxURL: base + "/sandbox",
                credentials: ServerAPICredentials(
                    issuerID: SimulatorServerAPIKey.issuerID, keyID: SimulatorServerAPIKey.keyID,
                    bundleID: apple.bundleIDs.first ?? SimulatorSettings.defaultBundleID,
                    signingKey: try ServerAPISigningKey(pem: SimulatorServerAPIKey.privateKeyPEM)),
                appAppleID: apple.appAppleID ?? SimulatorServerAPIKey.appAppleID, connectTimeout: apple.connectTimeout,
                attemptTimeout: apple.attemptTimeout, deadline: apple.verifyDeadline, acceptSandbox: apple.acceptSandbox)
            // What the simulator signs, and Apple's root as ever.
            let roots = try SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM])
            return (client, reader(client, roots, apple), caFile)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            throw ExitCode(ProcessLauncher.configurationErrorStatus)
        }
    }

    private func reader(
        _ client: ServerAPIClientConfiguration, _ roots: [Certificate], _ apple: AppleSettings
    ) -> SignedDataReader {
        SignedDataReader(
            verifier: SignedDataVerifier(trustedRoots: roots), bundleIDs: [client.credentials.bundleID],
            acceptSandbox: apple.acceptSandbox)
    }
}
