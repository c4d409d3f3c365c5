import Contracts
import Hummingbird

/// GET /v1/users/{user_id}/transactions?after=CURSOR&limit=N (spec v1.1):
/// every transaction credited to the user, newest first, a page at a time.
enum TransactionsRoute {
    static let maxLimit = 200

    struct Page: Encodable {
        let userID: String
        let transactions: [Credited]
        let next: String?
        enum CodingKeys: String, CodingKey { case userID = "user_id", transactions, next }
    }

    struct Credited: Encodable {
        let transactionID: String
        let originalTransactionID: String
        let productID: String
        let state: String
        let environment: String
        let purchaseDateMs: Int64
        let seq: UInt64

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id", originalTransactionID = "original_transaction_id"
            case productID = "product_id", state, environment, purchaseDateMs = "purchase_date_ms", seq
        }

        init(_ transaction: CreditedTransaction) {
            transactionID = transaction.transactionID
            originalTransactionID = transaction.originalTransactionID
            productID = transaction.productID
            state = transaction.state == .revoked ? "revoked" : "granted"
            environment = ReceiptAnswerJSON.environment(transaction.environment)
            purchaseDateMs = transaction.purchaseDateMs
            seq = transaction.seq
        }
    }

    static func answer(
        _ request: Request, _ context: GatewayRequestContext, _ dependencies: GatewayRouter.Dependencies
    ) async throws -> Response {
        let query: TransactionsQuery
        do {
            query = try self.query(request.uri.queryParameters, userID: context.parameters.get("user_id"))
        } catch {
            throw error.apiError
        }
        do {
            let page = try await dependencies.ledger.transactions(
                query, requestID: context.requestID,
                deadlineMilliseconds: dependencies.orchestrator.clock.deadline(after: RouteDeadlines.read))
            return try GatewayRouter.encoded(
                Page(userID: page.userID, transactions: page.transactions.map(Credited.init), next: page.next.isEmpty ? nil : page.next))
        } catch let failure as ServiceFailure {
            throw APIError(failure)
        } catch {
            throw APIError.unavailable
        }
    }

    /// The ledger's query for the path's user and the query string; the
    /// cursor is the ledger's to read.
    static func query(_ parameters: Parameters, userID: String?) throws(IntakeError) -> TransactionsQuery {
        // The router hands over the raw path segment: an id with a space or a slash arrives percent-encoded.
        let user = try ReceiptSubmission.checkedUserID(userID?.removingPercentEncoding)
        var limit: UInt32 = 0
        if let text = parameters.get("limit") {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw .badRequest("limit must be an integer from 1 to \(maxLimit)")
            }
            limit = UInt32(value)
        }
        let after = parameters.get("after") ?? ""
        guard after.utf8.count <= 512 else { throw .badRequest("after is not a cursor of this list") }
        return TransactionsQuery.with {
            $0.userID = user
            $0.after = after
            $0.limit = limit
        }
    }
}
