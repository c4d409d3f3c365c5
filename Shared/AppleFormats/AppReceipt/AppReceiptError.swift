import Contracts

/// Why `AppReceiptParser` could not read a receipt. Every case is the client's
/// bytes, not our trouble: the gateway answers each with `400
/// bad_receipt_encoding` (`failureCode`). The code is stable and short, fit for
/// a log field or a metric label; nothing of the receipt is in it.
public struct AppReceiptError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    private enum Reason: String, Hashable, Sendable {
        case notBase64 = "receipt_not_base64"
        case notSignedData = "receipt_not_pkcs7_signed_data"
        case noContent = "receipt_no_content"
        case malformedPayload = "receipt_payload_malformed"
        case malformedAttribute = "receipt_attribute_malformed"
    }

    private let reason: Reason

    /// The text is not base64 (after line breaks and spaces are dropped).
    public static let notBase64 = AppReceiptError(reason: .notBase64)
    /// The bytes are not BER, are cut short or run on, or are not a PKCS#7
    /// ContentInfo of SignedData (OID 1.2.840.113549.1.7.2) of the expected shape.
    public static let notSignedData = AppReceiptError(reason: .notSignedData)
    /// The SignedData encapsulates no `data` (OID 1.2.840.113549.1.7.1) octets.
    public static let noContent = AppReceiptError(reason: .noContent)
    /// The encapsulated octets are not a SET of receipt attributes
    /// `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
    public static let malformedPayload = AppReceiptError(reason: .malformedPayload)
    /// An attribute Storekeeper reads holds a value of another type, or a date that is not one.
    public static let malformedAttribute = AppReceiptError(reason: .malformedAttribute)

    /// The stable code, e.g. `receipt_not_base64`.
    public var code: String { reason.rawValue }

    /// What the client hears, whatever the reason.
    public var failureCode: FailureCode { .badReceiptEncoding }

    public var description: String { code }
}
