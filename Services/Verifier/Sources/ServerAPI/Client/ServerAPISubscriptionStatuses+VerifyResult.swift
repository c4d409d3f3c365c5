import Contracts

extension ServerAPISubscriptionStatuses {
    /// The statuses as the ledger records a verification (style
    /// `SIGNED_TRANSACTION`, as every signed transaction): each subscription's
    /// latest transaction once, and its renewal info as a `PendingRenewal`,
    /// stated when Apple answered. The same keys as a receipt's or a JWS's,
    /// so the ledger credits each transaction once whichever way it came.
    public func verifyResult(bundleID: String, nowMs: Int64) -> VerifyResult {
        var transactions: [Transaction] = []
        var renewals: [PendingRenewal] = []
        var seenTransactions = Set<String>()
        var seenRenewals = Set<String>()
        for status in subscriptions {
            if seenTransactions.insert(status.transaction.transactionID).inserted { transactions.append(status.transaction) }
            if let renewal = status.renewal, seenRenewals.insert(renewal.originalTransactionID).inserted {
                renewals.append(renewal)
            }
        }
        return VerifyResult.with {
            $0.environment = environment
            $0.style = .signedTransaction
            $0.bundleID = bundleID
            $0.requestDateMs = nowMs
            $0.transactions = transactions
            $0.pendingRenewals = renewals
        }
    }
}
