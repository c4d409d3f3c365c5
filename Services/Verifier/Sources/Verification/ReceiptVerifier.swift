import Contracts
import Crypto
import CurlHTTP
import Foundation
import Logging
import Metrics
import StorekeeperCore
import Synchronization

/// The one front door of receipt verification, whichever backend answers
/// (`ReceiptBackend`: verifyReceipt, or the App Store Server API's history
/// with `STOREKEEPER_RECEIPT_VERIFICATION=server_api`): the in-flight cap,
/// one backend call for identical requests in flight together, the
/// verifier's metrics, and the request's id and receipt digest on every log
/// line. In both modes, then, a burst of one receipt costs Apple one call:
/// the App Store Server API is rate-limited, verifyReceipt slow.
public final class ReceiptVerifier: Sendable {
    private let backend: any ReceiptBackend
    /// Whether verifying a receipt checks signatures (`ReceiptBackend.checksSignatures`).
    var checksSignatures: Bool { backend.checksSignatures }
    private let maxInFlight: Int
    private let logger: Logger
    private let metrics: VerifierMetrics
    private let inFlight = Atomic<Int>(0)
    private let coalescer = RequestCoalescer<ReceiptCoalescingKey, Result<VerifyResult, VerifyFailure>>()

    /// verifyReceipt (`STOREKEEPER_RECEIPT_VERIFICATION=verify_receipt`, the default) over `transport`.
    public convenience init(
        settings: AppleSettings, backoff: Backoff = Backoff(), logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        transport: @escaping @Sendable (HTTPRequest) async throws(HTTPClientError) -> HTTPResponse
    ) {
        let metrics = VerifierMetrics(factory: metricsFactory)
        self.init(
            backend: VerifyReceiptBackend(settings: settings, backoff: backoff, metrics: metrics, transport: transport),
            maxInFlight: settings.maxInFlight, logger: logger, metrics: metrics)
    }

    /// The App Store Server API's history (`STOREKEEPER_RECEIPT_VERIFICATION=server_api`).
    public convenience init(
        history: ServerAPIReceiptReader, maxInFlight: Int, logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.init(backend: history, maxInFlight: maxInFlight, logger: logger, metrics: VerifierMetrics(factory: metricsFactory))
    }

    init(backend: any ReceiptBackend, maxInFlight: Int, logger: Logger, metrics: VerifierMetrics) {
        self.backend = backend
        self.maxInFlight = maxInFlight
        self.logger = logger
        self.metrics = metrics
    }

    /// Callers waiting for an identical request's backend call (for tests).
    var coalescedCallers: Int { coalescer.followerCount }

    public func verify(
        _ request: VerifyRequest, deadline: ContinuousClock.Instant, requestID: String
    ) async -> Result<VerifyResult, VerifyFailure> {
        guard inFlight.add(1, ordering: .relaxed).newValue <= maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            return .failure(.overloaded)
        }
        metrics.inFlight.record(inFlight.load(ordering: .relaxed))
        // Recorded on the way down too: otherwise the gauge shows a burst's peak until the next receipt.
        defer { metrics.inFlight.record(inFlight.subtract(1, ordering: .relaxed).newValue) }
        var receipt = request.receiptData
        // Hashed where it lies: copying it into a Data first cost an allocation and a pass.
        let digest = Hex.lowercase(receipt.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) })
        var logger = logger
        logger[metadataKey: "request.id"] = "\(requestID)"
        logger[metadataKey: "receipt.sha256"] = "\(digest.prefix(16))"
        let (result, shared) = await coalescer.run(backend.coalescingKey(request, digest: digest)) {
            await self.backend.verify(request, digest: digest, deadline: deadline, logger: logger)
        }
        if shared { metrics.coalesced.increment() }
        return result
    }
}
