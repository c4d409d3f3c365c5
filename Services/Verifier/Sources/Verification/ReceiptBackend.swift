import Contracts
import Logging

/// One way of answering a receipt, behind `ReceiptVerifier`, which puts the
/// in-flight cap, the coalescing of identical requests, the metrics and the
/// request's log context around whichever is configured
/// (`STOREKEEPER_RECEIPT_VERIFICATION`): verifyReceipt (`VerifyReceiptBackend`)
/// or the App Store Server API's history (`ServerAPIReceiptReader`).
protocol ReceiptBackend: Sendable {
    /// What of the request this backend's answer depends on: requests in
    /// flight together with equal keys share one answer.
    func coalescingKey(_ request: VerifyRequest, digest: String) -> ReceiptCoalescingKey

    /// Whether answering checks signatures, CPU-bound work: the Server API's
    /// signed history does, verifyReceipt's JSON does not.
    var checksSignatures: Bool { get }

    /// The receipt's result, or why there is none. `digest` is the receipt's
    /// SHA-256 in hex; `logger` already carries `request.id` and `receipt.sha256`.
    func verify(
        _ request: VerifyRequest, digest: String, deadline: ContinuousClock.Instant, logger: Logger
    ) async -> Result<VerifyResult, VerifyFailure>
}

/// The parts of a verify request one answer stands for. A part a backend
/// does not read is nil, so requests differing only in it share its answer.
/// The receipt stands as its SHA-256, computed anyway: hashing and comparing
/// the receipt itself (kilobytes) cost a pass over it at each look-up.
struct ReceiptCoalescingKey: Hashable, Sendable {
    let receiptSHA256: String
    var excludeOldTransactions: Bool? = nil
    var start: AppleEnvironment? = nil
}
