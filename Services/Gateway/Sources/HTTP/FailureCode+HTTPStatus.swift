import Contracts
import HTTPTypes

extension FailureCode {
    /// The one table from code to HTTP status (spec: http-api.md, the error
    /// table). nil for the internal codes, which no client is shown: the
    /// gateway answers `service_unavailable` in their place.
    var httpStatus: HTTPResponse.Status? {
        switch self {
        case .badRequest, .badReceiptEncoding: .badRequest
        case .unauthorized: .unauthorized
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .alreadyBound: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .receiptInvalid, .bundleMismatch, .productMismatch, .signatureInvalid, .idempotencyKeyReused,
            .sandboxNotAccepted:
            .unprocessableContent
        case .rateLimited: .tooManyRequests
        case .sharedSecretMismatch, .appleRejectedRequest: .badGateway
        case .appleUnavailable, .serviceUnavailable: .serviceUnavailable
        case .internalError, .deadlineExceeded, .unsupportedContract, .overloaded, .serverAPIUnconfigured: nil
        }
    }
}
