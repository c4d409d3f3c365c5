import Contracts

/// Why the ledger refused a request. Refusing changes nothing: the request's
/// savepoint is rolled back.
public struct LedgerFailure: Error, Equatable, CustomStringConvertible {
    public let code: FailureCode
    public let message: String

    public static let alreadyBound = LedgerFailure(
        code: .alreadyBound, message: "the purchase belongs to another user (binding policy keep)")
    public static let idempotencyKeyReused = LedgerFailure(
        code: .idempotencyKeyReused, message: "this Idempotency-Key was used with another request body")
    public static let noPurchases = LedgerFailure(code: .receiptInvalid, message: "the receipt holds no purchases")

    public static func badRequest(_ message: String) -> LedgerFailure {
        LedgerFailure(code: .badRequest, message: message)
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public var serviceFailure: ServiceFailure { ServiceFailure(code, message: message) }
}

/// Checks on what a request names, before anything is written.
enum RequestValidation {
    static func validateUserID(_ userID: String) throws(LedgerFailure) {
        guard UserIDRule.accepts(userID) else { throw .badRequest(UserIDRule.requirement) }
    }

    static func validateEnvironment(_ environment: AppleEnvironment) throws(LedgerFailure) {
        guard environment == .production || environment == .sandbox else {
            throw .badRequest("the environment must be Production or Sandbox")
        }
    }
}
