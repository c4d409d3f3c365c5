import AppleFormats
import CurlHTTP
import Foundation

/// What one Server API exchange came to, as the state machine needs it.
/// Pure: a response (or transport error) in, an outcome out.
enum ServerAPIOutcome: Sendable, Equatable {
    /// 2xx: the answer's body.
    case answered([UInt8])
    /// 404 with an error code of kind `notFound` (4040010 and 4040005 let the sandbox be asked).
    case notFound(ServerAPIErrorCode)
    /// 401: the token (issuer, key id, key or claims) was refused.
    case unauthorized
    /// 429; `Retry-After` when Apple gave one.
    case rateLimited(retryAfter: Duration?)
    /// Apple's trouble: 5xx, one of its retryable codes, or an answer that is not Apple's (1xx, 3xx).
    case unavailable(status: Int, retryAfter: Duration?)
    /// No answer: a time-out, a connection or a TLS handshake that failed.
    case transportFailed(HTTPClientError)
    /// Any other answer: a request Apple will refuse again (400, 403, an unknown 4xx).
    case rejected(status: Int, code: ServerAPIErrorCode?, message: String?)
    /// A 2xx whose body is not the answer's shape (a proxy's page, a cut answer).
    case unreadable

    static func classify(_ response: HTTPResponse, nowMs: Int64) -> ServerAPIOutcome {
        let status = response.status
        if (200..<300).contains(status) { return .answered(response.body) }
        let error = try? JSONDecoder().decode(ServerAPIErrorBody.self, from: Data(response.body))
        let code = error?.errorCode.map(ServerAPIErrorCode.init(rawValue:))
        let retryAfter = Self.retryAfter(response.header("Retry-After"), nowMs: nowMs)
        if status == 401 { return .unauthorized }
        if status == 429 || code?.kind == .rateLimited { return .rateLimited(retryAfter: retryAfter) }
        if code?.kind == .retryable || (500...599).contains(status) {
            return .unavailable(status: status, retryAfter: retryAfter)
        }
        if status == 404, let code, code.kind == .notFound { return .notFound(code) }
        if (400...499).contains(status) { return .rejected(status: status, code: code, message: error?.errorMessage) }
        // 1xx and 3xx: not Apple's answers (Apple neither redirects nor continues); a proxy's trouble.
        return .unavailable(status: status, retryAfter: retryAfter)
    }

    /// A transport failure: Apple's trouble (or the network's), retried.
    static func classify(_ error: HTTPClientError) -> ServerAPIOutcome {
        .transportFailed(error)
    }

    /// `Retry-After` as seconds (RFC 9110), or as a UNIX time in seconds or in
    /// milliseconds (Apple documents the latter for some of its APIs); at most
    /// an hour, nil when absent or unreadable (the back-off decides then).
    static func retryAfter(_ header: String?, nowMs: Int64) -> Duration? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), let value = Int64(text), value >= 0 else {
            return nil
        }
        let milliseconds: Int64
        switch value {
        case 1_000_000_000_000...: milliseconds = max(0, value - nowMs)
        case 1_000_000_000...: milliseconds = max(0, value * 1_000 - nowMs)
        default: milliseconds = value * 1_000
        }
        return .milliseconds(min(milliseconds, 3_600_000))
    }
}
