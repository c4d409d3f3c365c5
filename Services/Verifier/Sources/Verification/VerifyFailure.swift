import Contracts
import Timekeeping

/// Why a verification produced no result. Each case maps to one of the
/// contract's error codes; the client hears 'retry' for `appleUnavailable`
/// and never 'invalid' for Apple's own trouble.
public enum VerifyFailure: Error, Equatable, Sendable {
    /// Apple says the receipt is not good (21003, 21010, 21002 twice, 21100-21199 not retryable).
    case receiptInvalid(appleStatus: Int)
    /// 21004: the configured shared secret is wrong or missing.
    case sharedSecretMismatch
    /// Apple kept failing (21005, 21009, 21100-21199 retryable, 5xx, time-outs) until the deadline.
    case appleUnavailable(appleStatus: Int?, retryAfter: Duration)
    /// 21000, or an HTTP 4xx other than 429: Apple refused a request Storekeeper
    /// built wrongly. Not retried: the same request would be refused again.
    case appleRejectedRequest(appleStatus: Int?, httpStatus: Int?)
    /// The receipt's bundle is not in STOREKEEPER_BUNDLE_IDS.
    case bundleMismatch(bundleID: String)
    /// A sandbox receipt while STOREKEEPER_ACCEPT_SANDBOX is false.
    case sandboxNotAccepted
    /// The verifier is at its in-flight bound; the caller should try another or wait.
    case overloaded
    /// `server_api` mode: the receipt refused, or not read from the App Store
    /// Server API, already as the client hears it (`ServerAPIReceiptReader`;
    /// the codes are docs/app-store-server-api.md's).
    case serverAPI(ServiceFailure)

    public var serviceFailure: ServiceFailure {
        switch self {
        case .receiptInvalid(let status):
            ServiceFailure(.receiptInvalid, message: "Apple rejected the receipt", appleStatus: Int32(status))
        case .sharedSecretMismatch:
            ServiceFailure(.sharedSecretMismatch, message: "Apple rejected the shared secret", appleStatus: 21004)
        case .appleUnavailable(let status, let retryAfter):
            ServiceFailure(
                .appleUnavailable, message: "Apple is unavailable; retry later", appleStatus: status.map(Int32.init),
                retryable: true, retryAfterMilliseconds: retryAfter.milliseconds)
        case .appleRejectedRequest(let status, _):
            ServiceFailure(
                .appleRejectedRequest, message: "Apple refused the request Storekeeper built",
                appleStatus: status.map(Int32.init))
        case .bundleMismatch:
            ServiceFailure(.bundleMismatch, message: "the receipt belongs to another app")
        case .sandboxNotAccepted:
            ServiceFailure(.sandboxNotAccepted, message: "sandbox purchases are not accepted here")
        case .overloaded:
            ServiceFailure(.overloaded, message: "verifier at capacity", retryable: true, retryAfterMilliseconds: 1_000)
        case .serverAPI(let failure):
            failure
        }
    }
}
