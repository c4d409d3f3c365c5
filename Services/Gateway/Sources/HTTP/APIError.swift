import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// An error answer of the external contract:
/// `{"error": {"code", "message", "apple_status"?, "retryable"}}`, with
/// `Retry-After` when retrying may help. Messages are short and generic: they
/// never carry a receipt, a secret or a user's data.
struct APIError: Error, Equatable {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    var appleStatus: Int32?
    var retryable = false
    /// Seconds, sent as `Retry-After` when retryable.
    var retryAfterSeconds: Int?

    static func badRequest(_ message: String) -> APIError { APIError(status: .badRequest, code: "bad_request", message: message) }
    static let unauthorized = APIError(
        status: .unauthorized, code: "unauthorized", message: "a valid Authorization: Bearer API key is required")
    static let payloadTooLarge = APIError(
        status: .contentTooLarge, code: "payload_too_large", message: "the request body is over the limit")
    static let notFound = APIError(status: .notFound, code: "not_found", message: "no such route")
    static func rateLimited(retryAfter seconds: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "rate_limited", message: "too many requests for this API key",
            retryable: true, retryAfterSeconds: seconds)
    }
    /// The ledger or the verifier pool did not answer in time: nothing was stored, retry.
    static let unavailable = APIError(
        status: .serviceUnavailable, code: "service_unavailable", message: "the service is busy; retry shortly",
        retryable: true, retryAfterSeconds: 2)

    /// The contract's status for each stable code a service answered with.
    init(_ failure: ServiceFailure) {
        let code = failure.failureCode
        switch code {
        case .badRequest, .badReceiptEncoding: status = .badRequest
        case .unauthorized: status = .unauthorized
        case .alreadyBound: status = .conflict
        case .payloadTooLarge: status = .contentTooLarge
        case .receiptInvalid, .bundleMismatch, .productMismatch, .signatureInvalid, .idempotencyKeyReused,
            .sandboxNotAccepted:
            status = .unprocessableContent
        case .sharedSecretMismatch, .appleRejectedRequest: status = .badGateway
        case .appleUnavailable: status = .serviceUnavailable
        case .internalError, .deadlineExceeded, .unsupportedContract, .overloaded, .serverAPIUnconfigured, nil:
            self = .unavailable
            return
        }
        self.code = failure.code
        self.message = failure.message
        self.appleStatus = failure.hasAppleStatus ? failure.appleStatus : nil
        self.retryable = code == .appleUnavailable
        if retryable {
            retryAfterSeconds = max(1, Int((failure.retryAfterMs + 999) / 1_000))
        }
    }

    init(
        status: HTTPResponse.Status, code: String, message: String, appleStatus: Int32? = nil, retryable: Bool = false,
        retryAfterSeconds: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.appleStatus = appleStatus
        self.retryable = retryable
        self.retryAfterSeconds = retryAfterSeconds
    }

    func response() -> Response {
        var error: [String: Any] = ["code": code, "message": message, "retryable": retryable]
        if let appleStatus { error["apple_status"] = Int(appleStatus) }
        var headers: HTTPFields = [.contentType: "application/json"]
        if retryable, let retryAfterSeconds { headers[.retryAfter] = "\(retryAfterSeconds)" }
        let data = (try? JSONSerialization.data(withJSONObject: ["error": error], options: [.sortedKeys])) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension IntakeError {
    /// The intake's refusal as the API answers it (kept here: the intake itself knows no HTTP).
    var apiError: APIError { APIError(status: .badRequest, code: code.rawValue, message: message) }
}
