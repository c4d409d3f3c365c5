import AppleFormats
import CallGates
import Contracts
import CurlHTTP
import Logging
import Metrics
import StorekeeperCore

@testable import Verifier

/// The verifier's own parts on the harness's simulator, as `storekeeper up
/// --sim` wires a verifier: verifyReceipt and the Server API both the
/// simulator's, over the same store.
extension ServerAPIHarness {
    /// verifyReceipt's verifier, with the simulator's shared secret.
    func receiptVerifier() throws -> ReceiptVerifier {
        let settings = try AppleSettings(
            reader: EnvironmentReader([
                "STOREKEEPER_APPLE_PRODUCTION_URL": base + "/production/verifyReceipt",
                "STOREKEEPER_APPLE_SANDBOX_URL": base + "/sandbox/verifyReceipt",
                "STOREKEEPER_APPLE_SHARED_SECRET": Self.sharedSecret, "STOREKEEPER_BUNDLE_IDS": Self.bundleID,
            ]))
        let curl = self.curl
        return ReceiptVerifier(settings: settings, logger: Logger(label: "verifier-test") { _ in SwiftLogNoOpLogHandler() }) {
            request throws(HTTPClientError) in try await curl.execute(request)
        }
    }

    /// `server_api` mode's verifier: the Server API's reader of receipts behind the front door.
    /// Its calls to the simulator wait at `gate`, when there is one.
    func historyVerifier(
        acceptSandbox: Bool = true, maxInFlight: Int = 4096, gate: CallGate? = nil,
        metrics: any MetricsFactory = NOOPMetricsHandler.instance
    ) throws -> ReceiptVerifier {
        ReceiptVerifier(
            history: ServerAPIReceiptReader(
                client: try client(acceptSandbox: acceptSandbox, gate: gate), bundleIDs: [Self.bundleID],
                acceptSandbox: acceptSandbox),
            maxInFlight: maxInFlight, logger: Logger(label: "history-test") { [logs] _ in logs }, metricsFactory: metrics)
    }

    /// The pool handler of a verifier with the Server API (or without it), in the receipt mode given.
    func handler(
        serverAPI: Bool = true, receipts mode: ReceiptVerificationMode = .verifyReceipt, deadline: Duration = .seconds(30)
    ) throws -> VerifyRequestHandler {
        VerifyRequestHandler(
            verifier: mode == .serverAPI ? try historyVerifier() : try receiptVerifier(), signedData: try reader(),
            serverAPI: serverAPI ? try client() : nil, defaultDeadline: deadline)
    }

    /// The pool's answer to `body`, as a verifier gives it.
    static func ask(
        _ handler: VerifyRequestHandler, _ body: Envelope.OneOf_Body, deadlineMs: Int64 = 0
    ) async -> Envelope.OneOf_Body? {
        await handler.handle(Envelope(requestID: "req-test", deadlineMilliseconds: deadlineMs, body: body)).body
    }
}
