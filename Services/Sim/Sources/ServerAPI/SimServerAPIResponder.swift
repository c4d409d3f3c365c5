import AppleFormats
import Contracts
import Foundation

/// Answers the Server API's calls about purchases from the simulator's store,
/// the way Apple does: the same shapes, 4040010 for a transaction the
/// environment does not know (so a client falls back to sandbox), pages of
/// `pageSize` with a revision to continue from, and every transaction and
/// renewal info as a JWS (signed by the caller, outside the lock).
///
/// Revisions: every change of a transaction (purchase, renewal, refund,
/// extension) takes the store's next revision number; a page lists the
/// account's transactions changed after the revision asked, oldest change
/// first, and its `revision` is the last one listed. The simulator keeps no
/// "finished" state, so the history leaves consumables out, as Apple's does
/// for consumables an app finished.
struct SimServerAPIResponder: Sendable {
    let bundleID: String
    /// Production answers carry it (`appAppleId`); sandbox ones do not.
    let appAppleID: Int64
    let pageSize: Int

    /// Apple's subscription status values.
    enum Status: Int32 { case active = 1, expired = 2, revoked = 5 }

    func answer(_ query: SimServerAPIQuery, at environment: AppleEnvironment, store: SimStore, now: Int64) -> SimUnsignedReply {
        switch query {
        case .transactionInfo(let id):
            guard let transaction = store.transaction(id, in: environment) else { return Self.notFound }
            return SimUnsignedReply(claims: [claims(transaction, now: now)]) { signed in
                .json(TransactionInfoResponse(signedTransactionInfo: signed[0]))
            }
        case .transactionHistory(let id, let revision):
            return page(of: id, since: revision, at: environment, store: store, now: now, where: { $0.type != .consumable }) {
                signed, revision, hasMore in
                HistoryResponse(
                    revision: revision, hasMore: hasMore, bundleId: bundleID, appAppleId: appAppleID(environment),
                    environment: SimSignedClaims.environmentName(environment), signedTransactions: signed)
            }
        case .refundHistory(let id, let revision):
            return page(of: id, since: revision, at: environment, store: store, now: now, where: { $0.cancellationMs != nil }) {
                signed, revision, hasMore in
                RefundHistoryResponse(signedTransactions: signed, revision: revision, hasMore: hasMore)
            }
        case .subscriptionStatuses(let id):
            guard let transaction = store.transaction(id, in: environment) else { return Self.notFound }
            return statuses(of: transaction.account, at: environment, store: store, now: now)
        case .orderLookup(let orderID):
            guard let transaction = store.order(orderID, in: environment) else {
                return .plain(.json(OrderLookupResponse(status: 1, signedTransactions: nil)))
            }
            return SimUnsignedReply(claims: [claims(transaction, now: now)]) { signed in
                .json(OrderLookupResponse(status: 0, signedTransactions: signed))
            }
        }
    }

    static let notFound = SimUnsignedReply.plain(.error(404, .transactionIdNotFound))

    private func appAppleID(_ environment: AppleEnvironment) -> Int64? {
        environment == .production ? appAppleID : nil
    }

    private func claims(_ transaction: SimTransaction, now: Int64) -> Data {
        SimJSONWriter.data(SimSignedClaims.transaction(transaction, bundleID: bundleID, now: now))
    }

    /// One page of the account's transactions that pass `filter`, changed after `revision`.
    private func page<Page: Encodable & Sendable>(
        of id: String, since revision: String?, at environment: AppleEnvironment, store: SimStore, now: Int64,
        where filter: (SimTransaction) -> Bool,
        build: @escaping @Sendable (_ signed: [String], _ revision: String, _ hasMore: Bool) -> Page
    ) -> SimUnsignedReply {
        guard let transaction = store.transaction(id, in: environment) else { return Self.notFound }
        var since: Int64 = 0
        if let revision {
            guard let parsed = Int64(revision), parsed >= 0 else { return .plain(.error(400, .invalidRequestRevision)) }
            since = parsed
        }
        let changed = store.transactions(ofAccount: transaction.account, environment)
            .filter { $0.revision > since && filter($0) }
            .sorted { $0.revision < $1.revision }
        let listed = changed.prefix(pageSize)
        let next = String(listed.last?.revision ?? since)
        let hasMore = changed.count > listed.count
        return SimUnsignedReply(claims: listed.map { claims($0, now: now) }) { signed in
            .json(build(signed, next, hasMore))
        }
    }

    /// Each subscription of the account, in the simulator's one subscription group.
    private func statuses(of account: String, at environment: AppleEnvironment, store: SimStore, now: Int64) -> SimUnsignedReply {
        var found: [(originalID: String, status: Status)] = []
        var claims: [Data] = []
        let subscriptions = store.subscriptions.values
            .filter { $0.account == account && $0.environment == environment }
            .sorted { $0.originalID < $1.originalID }
        for subscription in subscriptions {
            guard let latest = subscription.transactionIDs.last.flatMap({ store.transactions[$0] }) else { continue }
            let status: Status =
                latest.cancellationMs != nil ? .revoked : (latest.expiresMs ?? 0) > now ? .active : .expired
            found.append((subscription.originalID, status))
            claims.append(self.claims(latest, now: now))
            claims.append(
                SimJSONWriter.data(SimSignedClaims.renewal(subscription, renewalDate: latest.expiresMs, now: now)))
        }
        let (bundleID, appAppleID, items) = (self.bundleID, self.appAppleID(environment), found)
        return SimUnsignedReply(claims: claims) { signed in
            let last = items.enumerated().map { index, item in
                LastTransactionsItem(
                    status: item.status.rawValue, originalTransactionId: item.originalID,
                    signedTransactionInfo: signed[2 * index], signedRenewalInfo: signed[2 * index + 1])
            }
            let groups =
                last.isEmpty
                ? [] : [SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: SimSignedClaims.subscriptionGroup, lastTransactions: last)]
            return .json(
                StatusResponse(
                    environment: SimSignedClaims.environmentName(environment), bundleId: bundleID, appAppleId: appAppleID,
                    data: groups))
        }
    }
}
