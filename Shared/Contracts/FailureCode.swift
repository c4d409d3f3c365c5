/// The stable codes a `ServiceFailure` carries between processes. The first
/// group is the external contract's (spec: POST /v1/receipts errors) and goes
/// to clients unchanged; the rest are internal and become `internal_error` or
/// `apple_unavailable` at the gateway.
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
    // Internal.
    case internalError = "internal_error"
    case deadlineExceeded = "deadline_exceeded"
    case unsupportedContract = "unsupported_contract"
    case overloaded = "overloaded"
    /// A verifier asked for an App Store Server API call has no credentials for it.
    case serverAPIUnconfigured = "server_api_unconfigured"
}

extension ServiceFailure {
    public init(
        _ code: FailureCode, message: String, appleStatus: Int32? = nil, retryable: Bool = false,
        retryAfterMilliseconds: Int64 = 0
    ) {
        self.init()
        self.code = code.rawValue
        self.message = message
        if let appleStatus { self.appleStatus = appleStatus }
        self.retryable = retryable
        self.retryAfterMs = retryAfterMilliseconds
    }

    /// The code as a known case; nil for a code this build does not know.
    public var failureCode: FailureCode? { FailureCode(rawValue: code) }
}

/// A failure answered by another process, thrown on by the caller that received it.
extension ServiceFailure: Error {}
