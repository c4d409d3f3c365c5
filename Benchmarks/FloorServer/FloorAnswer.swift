import Contracts
import Foundation
import Hummingbird

/// The contract's answer to a verified receipt, as the peers write it.
struct FloorAnswer: Encodable {
    struct Granted: Encodable {
        let transaction_id: String
        let original_transaction_id: String
        let product_id: String
        let quantity: Int32
        let purchase_date_ms: Int64
        let expires_date_ms: Int64?
    }
    struct Revoked: Encodable {
        let transaction_id: String
        let cancellation_date_ms: Int64
    }
    struct Entitlement: Encodable {
        let product_id: String
        let original_transaction_id: String
        let environment: String
        let expires_date_ms: Int64
        let active: Bool
        let auto_renew: Bool
        let state: String
        let kind = "auto_renewable"
    }

    let user_id: String
    let environment: String
    let bundle_id: String
    let apple_status = 0
    let granted: [Granted]
    let already_granted: [String]
    let revoked: [Revoked]
    let entitlements: [Entitlement]

    init(userID: String, result: VerifyResult, recorded: FloorGrants.Recorded) {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        user_id = userID
        environment = result.environment.appleName
        bundle_id = result.bundleID
        granted = recorded.granted.map {
            Granted(
                transaction_id: $0.transactionID, original_transaction_id: $0.originalTransactionID,
                product_id: $0.productID, quantity: $0.quantity, purchase_date_ms: $0.purchaseDateMs,
                expires_date_ms: $0.hasExpiresDateMs ? $0.expiresDateMs : nil)
        }
        already_granted = recorded.alreadyGranted
        revoked = result.transactions.filter(\.hasCancellationDateMs).map {
            Revoked(transaction_id: $0.transactionID, cancellation_date_ms: $0.cancellationDateMs)
        }
        entitlements = recorded.subscriptions.map {
            Entitlement(
                product_id: $0.productID, original_transaction_id: $0.originalTransactionID,
                environment: $0.environment, expires_date_ms: $0.expiresDateMs, active: $0.expiresDateMs > now,
                auto_renew: $0.autoRenew, state: $0.expiresDateMs > now ? "active" : "expired")
        }
    }

    func response() throws -> Response { try Self.json(.ok, self) }

    /// Any answer of the floor: `value` as JSON with `status`.
    static func json(_ status: HTTPTypes.HTTPResponse.Status, _ value: some Encodable) throws -> Response {
        let body = try JSONEncoder().encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
