import Contracts

/// GET /v1/users/{user_id}/transactions: every transaction credited to a
/// user, newest credit first (by the seq of the event that credited it), in
/// pages whose cursor is the last row of the page before.
enum CreditListing {
    static let defaultLimit = 50
    static let maxLimit = 200

    static func page(_ query: TransactionsQuery, store: any LedgerStore) async throws -> TransactionsPage {
        try RequestValidation.validateUserID(query.userID)
        let cursor = query.after.isEmpty ? nil : CreditCursor(token: query.after)
        guard query.after.isEmpty || cursor != nil else { throw LedgerFailure.badRequest("after is not a cursor of this list") }
        let limit = query.limit == 0 ? defaultLimit : min(Int(query.limit), maxLimit)
        // One row more than the page says whether another page follows.
        let rows = try await store.read { reader in
            try reader.creditedTransactions(of: query.userID, after: cursor, limit: limit + 1)
        }
        return TransactionsPage.with { page in
            page.userID = query.userID
            page.transactions = rows.prefix(limit).map(credited)
            if rows.count > limit, let last = rows.prefix(limit).last { page.next = CreditCursor(after: last).token }
        }
    }

    static func credited(_ record: CreditedRecord) -> CreditedTransaction {
        let transaction = record.transaction
        return CreditedTransaction.with {
            $0.transactionID = transaction.key.transactionID
            $0.originalTransactionID = transaction.originalTransactionID
            $0.productID = transaction.productID
            $0.state = transaction.isRevoked ? .revoked : .granted
            $0.environment = transaction.key.environment
            $0.purchaseDateMs = transaction.purchaseDateMs
            $0.seq = record.grantedSeq
        }
    }
}
