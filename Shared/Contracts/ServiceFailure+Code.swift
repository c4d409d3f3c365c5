/// A `ServiceFailure` (the protobuf message) made from and read as a `FailureCode`.
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
