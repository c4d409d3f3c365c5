import AppleFormats
import Contracts

/// The calls about a customer's purchases. Each takes any transaction id of
/// the customer (an original one too) and asks production, then sandbox on
/// 4040010; given an `environment`, it asks that one alone, for a caller that
/// knows where the customer's purchases are (ids are unique per environment).
extension AppStoreServerClient {
    /// Get Transaction Info: the transaction as a StoreKit 2 `VerifyResult`
    /// (style `SIGNED_TRANSACTION`), ready for the ledger.
    public func transactionInfo(
        _ transactionID: String, environment asked: AppleEnvironment? = nil, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> VerifyResult {
        let (environment, answer) = try await executor.perform(
            .transactionInfo(transactionID).restricted(to: asked), as: TransactionInfoResponse.self,
            in: asked ?? .production, deadline: self.deadline(deadline))
        guard let jws = answer.signedTransactionInfo else { throw Self.missing("signedTransactionInfo") }
        return try await checks.transaction(jws, from: environment, nowMs: nowMs)
    }

    /// Get Transaction History (version 2), every page: all the customer's
    /// transactions in the app (Apple leaves out consumables that were
    /// finished), or with `since`, those that changed after that revision.
    public func transactionHistory(
        _ transactionID: String, since revision: String? = nil, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> ServerAPITransactions {
        let (environment, pages, last) = try await allPages(
            of: HistoryResponse.self, from: revision, in: .production, deadline: self.deadline(deadline),
            request: { .transactionHistory(transactionID, revision: $0) }, next: { ($0.revision, $0.hasMore ?? false) })
        for page in pages {
            try checks.check(
                bundleID: page.bundleId, appAppleID: page.appAppleId, environment: page.environment, asked: environment)
        }
        return try await transactions(pages.flatMap { $0.signedTransactions ?? [] }, in: environment, revision: last)
    }

    /// Get Refund History (version 2), every page: the customer's refunded transactions.
    public func refundHistory(
        _ transactionID: String, since revision: String? = nil, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> ServerAPITransactions {
        let (environment, pages, last) = try await allPages(
            of: RefundHistoryResponse.self, from: revision, in: .production, deadline: self.deadline(deadline),
            request: { .refundHistory(transactionID, revision: $0) }, next: { ($0.revision, $0.hasMore ?? false) })
        return try await transactions(pages.flatMap { $0.signedTransactions ?? [] }, in: environment, revision: last)
    }

    /// Get All Subscription Statuses: every subscription of the customer, with
    /// its latest transaction and renewal info. `environment` asks that one
    /// only (the ledger knows which its subscription is in; ids are unique
    /// per environment); nil asks production, then sandbox.
    public func subscriptionStatuses(
        _ transactionID: String, environment asked: AppleEnvironment? = nil, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> ServerAPISubscriptionStatuses {
        let (environment, answer) = try await executor.perform(
            .subscriptionStatuses(transactionID).restricted(to: asked), as: StatusResponse.self, in: asked ?? .production,
            deadline: self.deadline(deadline))
        try checks.check(
            bundleID: answer.bundleId, appAppleID: answer.appAppleId, environment: answer.environment, asked: environment)
        var subscriptions: [ServerAPISubscriptionStatus] = []
        for group in answer.data ?? [] {
            for item in group.lastTransactions ?? [] {
                guard let signed = item.signedTransactionInfo else { throw Self.missing("signedTransactionInfo") }
                let transaction = try await checks.transaction(signed, from: environment, nowMs: nowMs).transactions[0]
                let original = item.originalTransactionId ?? transaction.originalTransactionID
                guard original == transaction.originalTransactionID else {
                    throw .answerInvalid(SignedDataReader.invalid("a status names another subscription than its transaction"))
                }
                var renewal: PendingRenewal?
                if let signedRenewal = item.signedRenewalInfo {
                    renewal = try await checks.renewal(signedRenewal, from: environment, originalTransactionID: original)
                }
                subscriptions.append(
                    ServerAPISubscriptionStatus(
                        subscriptionGroupIdentifier: group.subscriptionGroupIdentifier ?? "", status: item.status ?? 0,
                        originalTransactionID: original, transaction: transaction, renewal: renewal,
                        signedTransaction: signed, signedRenewalInfo: item.signedRenewalInfo))
            }
        }
        return ServerAPISubscriptionStatuses(environment: environment, subscriptions: subscriptions)
    }

    /// Look Up Order ID (the id on the customer's invoice email). Orders are
    /// production's; the sandbox may be asked explicitly.
    public func lookUpOrder(
        _ orderID: String, environment: AppleEnvironment = .production, deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> ServerAPIOrder {
        let (answeredIn, answer) = try await executor.perform(
            .lookUpOrder(orderID), as: OrderLookupResponse.self, in: environment, deadline: self.deadline(deadline))
        let isValid = answer.status == 0
        let signed = isValid ? answer.signedTransactions ?? [] : []
        return ServerAPIOrder(isValid: isValid, transactions: try await transactions(signed, in: answeredIn, revision: nil))
    }
}
