import Contracts
import Crypto
import HTTPTypes
import StorekeeperCore

/// The `Idempotency-Key` header of POST /v1/receipts and /v1/transactions
/// (spec v1.1): 1-255 printable ASCII characters, scoped to the API key that
/// sent it and bound to the request body by its digest.
enum IdempotencyHeader {
    static let name = HTTPField.Name("Idempotency-Key")!

    /// nil when the request carries no key.
    /// - Parameter scope: SHA-256 (hex) of the caller's API key; empty when keys are off.
    static func key(_ headers: HTTPFields, scope: String, body: [UInt8]) throws(IntakeError) -> IdempotencyKey? {
        let values = headers[values: name]
        guard let value = values.first else { return nil }
        guard values.count == 1 else { throw .badRequest("send one Idempotency-Key header") }
        guard (1...255).contains(value.utf8.count), value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .badRequest("Idempotency-Key must be 1-255 printable ASCII characters")
        }
        return IdempotencyKey.with {
            $0.scope = scope
            $0.key = value
            $0.requestSha256 = Hex.lowercase(SHA256.hash(data: body))
        }
    }
}
