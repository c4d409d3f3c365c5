/// The stable error codes: the one list for what a `ServiceFailure` carries
/// between processes and what the gateway answers (`APIError`). The first
/// group is the external contract's (spec: POST /v1/receipts errors) and goes
/// to clients unchanged; the second the gateway answers on its own; the
/// internal ones never reach a client (the gateway answers
/// `service_unavailable` for them). The HTTP status of each is the gateway's
/// table (`FailureCode.httpStatus`).
public enum FailureCode: String, CaseIterable, Sendable {
    case badRequest = "bad_request"
    case badReceiptEncoding = "bad_receipt_encoding"
    case unauthorized = "unauthorized"
    case alreadyBound = "already_bound"
    case payloadTooLarge = "payload_too_large"
    case receiptInvalid = "receipt_invalid"
    case bundleMismatch = "bundle_mismatch"
    case productMismatch = "product_mismatch"
    case sharedSecretMismatch = "shared_secret_mismatch"
    case appleUnavailable = "apple_unavailable"
    /// A StoreKit 2 or notification JWS that does not verify against Apple's chain.
    case signatureInvalid = "signature_invalid"
    /// Apple answered 21000 or an HTTP 4xx other than 429: a request Storekeeper built wrongly.
    case appleRejectedRequest = "apple_rejected_request"
    /// STOREKEEPER_ACCEPT_SANDBOX=false and the purchase is from the sandbox.
    case sandboxNotAccepted = "sandbox_not_accepted"
    /// The same Idempotency-Key with a different request body.
    case idempotencyKeyReused = "idempotency_key_reused"
    // Answered by the gateway itself, never carried between processes.
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case rateLimited = "rate_limited"
    /// The ledger or the verifier pool did not answer in time, or answered an internal failure.
    case serviceUnavailable = "service_unavailable"
    // Internal.
    case internalError = "internal_error"
    case deadlineExceeded = "deadline_exceeded"
    case unsupportedContract = "unsupported_contract"
    case overloaded = "overloaded"
    /// A verifier asked for an App Store Server API call has no credentials for it.
    case serverAPIUnconfigured = "server_api_unconfigured"
}
