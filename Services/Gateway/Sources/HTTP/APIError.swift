import AppleFormats
import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// An error answer of the external contract:
/// `{"error": {"code", "message", "apple_status"?, "retryable"}}`, with
/// `Retry-After` when retrying may help. Messages are short and generic: they
/// never carry a receipt, a secret or a user's data. The status is the code's
/// (`FailureCode.httpStatus`, the one table).
struct APIError: Error, Equatable, HTTPResponseError {
    let code: FailureCode
    let message: String
    var appleStatus: Int32?
    var retryable = false
    /// Seconds, sent as `Retry-After` when retryable.
    var retryAfterSeconds: Int?

    var status: HTTPResponse.Status { code.httpStatus ?? .serviceUnavailable }

    /// `code` must be one a client may see (the gateway's table has a status for it).
    init(_ code: FailureCode, _ message: String, appleStatus: Int32? = nil, retryable: Bool = false, retryAfterSeconds: Int? = nil) {
        precondition(code.httpStatus != nil, "\(code.rawValue) is internal: answer APIError.unavailable")
        self.code = code
        self.message = message
        self.appleStatus = appleStatus
        self.retryable = retryable
        self.retryAfterSeconds = retryAfterSeconds
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, message) }
    static let unauthorized = APIError(.unauthorized, "a valid Authorization: Bearer API key is required")
    static let payloadTooLarge = APIError(.payloadTooLarge, "the request body is over the limit")
    static let notFound = APIError(.notFound, "no such route")
    static let methodNotAllowed = APIError(.methodNotAllowed, "method not allowed")
    static func rateLimited(retryAfter seconds: Int) -> APIError {
        APIError(.rateLimited, "too many requests for this API key", retryable: true, retryAfterSeconds: seconds)
    }
    /// The ledger or the verifier pool did not answer in time: nothing was stored, retry.
    static let unavailable = APIError(
        .serviceUnavailable, "the service is busy; retry shortly", retryable: true, retryAfterSeconds: 2)

    /// What a service answered, as the contract shows it; an internal code is `unavailable`.
    init(_ failure: ServiceFailure) {
        guard let code = failure.failureCode, code.httpStatus != nil else {
            self = .unavailable
            return
        }
        self.init(code, failure.message, appleStatus: failure.hasAppleStatus ? failure.appleStatus : nil)
        if code == .appleUnavailable {
            retryable = true
            retryAfterSeconds = max(1, Int((failure.retryAfterMs + 999) / 1_000))
        }
    }

    /// Hummingbird's own errors (an unknown route, a body it could not read).
    init(_ error: HTTPError) {
        self =
            switch error.status {
            case .contentTooLarge: .payloadTooLarge
            case .notFound: .notFound
            case .methodNotAllowed: .methodNotAllowed
            default: .badRequest("the request could not be read")
            }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response { response() }

    /// The body in the spec's order (code, message, apple_status, retryable),
    /// written directly: no key sorting, as `GatewayRouter.json` promises for
    /// every answer, and the same bytes every time.
    func response() -> Response {
        var body = #"{"error":{"code":""# + code.rawValue + #"","message":"#
        body += Self.quoted(message)
        if let appleStatus { body += #","apple_status":\#(appleStatus)"# }
        body += #","retryable":\#(retryable)}}"#
        var headers: HTTPFields = [.contentType: "application/json"]
        if retryable, let retryAfterSeconds { headers[.retryAfter] = "\(retryAfterSeconds)" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// A JSON string literal (a single string encodes the same way every time).
    private static func quoted(_ text: String) -> String {
        var quoted: [UInt8] = []
        JSONWriter.appendString(text, to: &quoted)
        return String(decoding: quoted, as: UTF8.self)
    }
}

extension IntakeError {
    /// The intake's refusal as the API answers it (kept here: the intake itself knows no HTTP).
    var apiError: APIError { APIError(code, message) }
}
