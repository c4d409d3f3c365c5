import AppleFormats
import Contracts
import CurlHTTP

/// Why a Server API call produced no answer. A struct with a closed set of
/// codes (as `HTTPClientError`); `description` is the stable code, fit for a
/// log field or a metric label, and never carries an id, a token or a JWS.
///
/// `serviceFailure` is the one table from these to the spec's error codes
/// (what Storekeeper's clients hear); `ServerAPIErrorCode` is the one table
/// of Apple's codes these come from.
public struct ServerAPIError: Error, Equatable, Sendable, CustomStringConvertible {
    private enum Code: Equatable, Sendable {
        case unauthorized, notFound, unavailable, rejected, answerInvalid, sandboxNotAccepted, cancelled
    }

    private let code: Code
    /// Apple's `errorCode`, where its answer had one.
    public let appleErrorCode: ServerAPIErrorCode?
    /// Apple's `errorMessage` (Apple's own words, nothing of the request).
    public let appleMessage: String?
    /// The HTTP status of the last answer Apple gave, where there was one.
    public let httpStatus: Int?
    /// For `unavailable`: when trying again is worth it.
    public let retryAfter: Duration?
    /// For `unavailable`: why the tries since Apple's last answer got none, when they got none;
    /// a time-out only when no try named a cause.
    public let transportFailure: HTTPClientError?
    /// For `answerInvalid`: what the check of Apple's signed answer found.
    let answerFailure: ServiceFailure?

    private init(
        _ code: Code, appleErrorCode: ServerAPIErrorCode? = nil, appleMessage: String? = nil, httpStatus: Int? = nil,
        retryAfter: Duration? = nil, transportFailure: HTTPClientError? = nil, answerFailure: ServiceFailure? = nil
    ) {
        self.code = code
        self.appleErrorCode = appleErrorCode
        self.appleMessage = appleMessage
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
        self.transportFailure = transportFailure
        self.answerFailure = answerFailure
    }

    /// 401: Apple refused the credentials (issuer, key id or key), or the key
    /// could not sign. A configuration error: logged as one, never retried.
    public static let unauthorized = ServerAPIError(.unauthorized, httpStatus: 401)
    /// A sandbox transaction while `STOREKEEPER_ACCEPT_SANDBOX` is false.
    public static let sandboxNotAccepted = ServerAPIError(.sandboxNotAccepted)
    /// The calling task was cancelled.
    public static let cancelled = ServerAPIError(.cancelled)

    /// Neither environment asked knows the transaction (4040010, 4040005), or
    /// the test notification is unknown or not ready yet (4040008).
    static func notFound(_ code: ServerAPIErrorCode) -> ServerAPIError {
        ServerAPIError(.notFound, appleErrorCode: code, httpStatus: 404)
    }

    /// 5xx, 429, Apple's retryable codes or time-outs, still so at the deadline.
    static func unavailable(
        retryAfter: Duration, httpStatus: Int?, transportFailure: HTTPClientError? = nil
    ) -> ServerAPIError {
        ServerAPIError(.unavailable, httpStatus: httpStatus, retryAfter: retryAfter, transportFailure: transportFailure)
    }

    /// Any other 4xx: the request is wrong (or, 403, not allowed for this purchase).
    static func rejected(status: Int, code: ServerAPIErrorCode?, message: String?) -> ServerAPIError {
        ServerAPIError(.rejected, appleErrorCode: code, appleMessage: message, httpStatus: status)
    }

    /// A signed answer that failed its checks (chain, app, environment), or an
    /// answer of the wrong shape: nothing of it is used.
    static func answerInvalid(_ failure: ServiceFailure) -> ServerAPIError {
        ServerAPIError(.answerInvalid, answerFailure: failure)
    }

    public var isNotFound: Bool { code == .notFound }
    public var isUnauthorized: Bool { code == .unauthorized }
    /// A 4xx Apple will answer again: the request (or, 403, what it asks for) is refused.
    public var isRejected: Bool { code == .rejected }
    /// Worth trying again later (`retryAfter` says when).
    public var isRetryable: Bool { code == .unavailable }

    public var description: String {
        switch code {
        case .unauthorized: "server_api_unauthorized"
        case .notFound: "server_api_not_found"
        case .unavailable: "server_api_unavailable"
        case .rejected: "server_api_rejected"
        case .answerInvalid: "server_api_answer_invalid"
        case .sandboxNotAccepted: "server_api_sandbox_not_accepted"
        case .cancelled: "server_api_cancelled"
        }
    }

    /// What a client of Storekeeper hears (spec: error codes).
    public var serviceFailure: ServiceFailure {
        switch code {
        case .unauthorized:
            // A configuration error, like a wrong shared secret: 502, not retried.
            ServiceFailure(.appleRejectedRequest, message: "Apple refused the App Store Server API credentials")
        case .notFound:
            ServiceFailure(.receiptInvalid, message: "Apple knows no such transaction")
        case .unavailable:
            ServiceFailure(
                .appleUnavailable, message: "Apple is unavailable; retry later", retryable: true,
                retryAfterMilliseconds: (retryAfter ?? .seconds(1)).milliseconds)
        case .rejected:
            ServiceFailure(.appleRejectedRequest, message: "Apple refused the request Storekeeper built")
        case .answerInvalid:
            answerFailure ?? ServiceFailure(.signatureInvalid, message: "Apple's answer failed its checks")
        case .sandboxNotAccepted:
            ServiceFailure(.sandboxNotAccepted, message: "sandbox purchases are not accepted here")
        case .cancelled:
            ServiceFailure(.deadlineExceeded, message: "the Server API call was cancelled")
        }
    }
}
