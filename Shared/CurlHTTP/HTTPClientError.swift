/// Why `CurlHTTPClient.execute` produced no response.
///
/// A struct with a closed set of codes rather than a public enum, so cases can
/// be added without breaking callers (async-http-client's `HTTPClientError`).
/// The description is short and stable, fit for a log field or a metric label,
/// and never carries the URL, headers or body: they may hold secrets.
public struct HTTPClientError: Error, Equatable, Hashable, CustomStringConvertible {
    private enum Code: Hashable {
        case connectFailed, timedOut, tlsFailure, responseTooLarge, shutdown, cancelled, invalidRequest, loopFailed
        case transport(curlCode: Int)
    }

    private let code: Code

    /// The host did not resolve, or refused or dropped the TCP connection.
    public static let connectFailed = HTTPClientError(code: .connectFailed)
    /// The connect or total time-out passed.
    public static let timedOut = HTTPClientError(code: .timedOut)
    /// The TLS handshake or certificate verification failed.
    public static let tlsFailure = HTTPClientError(code: .tlsFailure)
    /// The response body exceeded the request's `maxResponseBytes` (or its headers 64 KiB).
    public static let responseTooLarge = HTTPClientError(code: .responseTooLarge)
    /// The client stopped (or had stopped) before the response arrived.
    public static let shutdown = HTTPClientError(code: .shutdown)
    /// The calling task was cancelled; the transfer was abandoned.
    public static let cancelled = HTTPClientError(code: .cancelled)
    /// The request cannot be sent as given (URL, header characters, limits).
    public static let invalidRequest = HTTPClientError(code: .invalidRequest)
    /// The client's loop could not start, or curl's multi interface failed
    /// (the `CURLM_*` code is logged). Thrown by `run()` only.
    public static let loopFailed = HTTPClientError(code: .loopFailed)

    /// Any other libcurl failure; `curlCode` is the `CURLE_*` number.
    public static func transport(curlCode: Int) -> HTTPClientError {
        HTTPClientError(code: .transport(curlCode: curlCode))
    }

    /// The `CURLE_*` number of a `.transport` error, otherwise `nil`.
    public var curlCode: Int? {
        if case .transport(let curlCode) = code { curlCode } else { nil }
    }

    public var description: String {
        switch code {
        case .connectFailed: "connect failed"
        case .timedOut: "timed out"
        case .tlsFailure: "TLS failure"
        case .responseTooLarge: "response too large"
        case .shutdown: "client shut down"
        case .cancelled: "cancelled"
        case .invalidRequest: "invalid request"
        case .loopFailed: "curl multi loop failed"
        case .transport(let curlCode): "transport error (curl \(curlCode))"
        }
    }
}
