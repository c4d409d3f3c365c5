import Contracts

/// Why a receipt request could not be read. The message names the field and
/// never echoes what the client sent (it may be a receipt).
struct IntakeError: Error, Equatable {
    /// `bad_request` or `bad_receipt_encoding`.
    let code: FailureCode
    let message: String

    static func badRequest(_ message: String) -> IntakeError { IntakeError(code: .badRequest, message: message) }
    static func badEncoding(_ message: String) -> IntakeError { IntakeError(code: .badReceiptEncoding, message: message) }
}
