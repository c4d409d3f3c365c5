/// What an Apple verifyReceipt status means for us: one table, so the
/// verifier's retry loop, the gateway's HTTP answer and the docs agree.
public enum AppleStatusClass: Equatable, Sendable {
    /// 0, and 21006 (valid, subscription expired; the receipt is still decoded).
    case valid
    /// 21007: a sandbox receipt sent to production; ask sandbox.
    case sandboxReceiptAtProduction
    /// 21008: a production receipt sent to sandbox; ask production.
    case productionReceiptAtSandbox
    /// 21002: malformed receipt data, but Apple also says it in passing trouble: retry once, then invalid.
    case malformedRetryOnce
    /// 21003, 21010, 21100-21199 not retryable, and unknown statuses: the receipt is not good.
    case invalid
    /// 21004: the shared secret is wrong or missing; our configuration, not the user.
    case sharedSecretMismatch
    /// 21000: the request to Apple was malformed: a bug of ours.
    case rejectedRequest
    /// 21005, 21009, 21100-21199 retryable: Apple's trouble; retry with back-off.
    case retryable
}

public enum AppleStatus {
    /// Classifies `status`. `isRetryable` is Apple's `is-retryable` (or
    /// `is_retryable`) flag, which only matters for 21100-21199.
    public static func classify(_ status: Int, isRetryable: Bool?) -> AppleStatusClass {
        switch status {
        case 0, 21006: .valid
        case 21007: .sandboxReceiptAtProduction
        case 21008: .productionReceiptAtSandbox
        case 21002: .malformedRetryOnce
        case 21004: .sharedSecretMismatch
        case 21000: .rejectedRequest
        case 21005, 21009: .retryable
        case 21100...21199: isRetryable == false ? .invalid : .retryable
        default: .invalid  // 21003, 21010 and anything Apple adds later that we cannot interpret.
        }
    }
}
