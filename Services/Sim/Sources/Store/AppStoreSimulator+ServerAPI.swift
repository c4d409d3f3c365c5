import AppleFormats
import Contracts
import Foundation

/// The simulator's App Store Server API over the same store and clock as its
/// verifyReceipt: what is bought there is what these calls see. Answers are
/// built under the lock and signed outside it.
extension AppStoreSimulator {
    /// The read-only calls about purchases (`SimServerAPIResponder`).
    func serverAPI(_ query: SimServerAPIQuery, at environment: AppleEnvironment) -> SimServerAPIReply {
        let unsigned = state.withLock { state in
            serverAPIResponder.answer(query, at: environment, store: state.store, now: wallClock() + state.clockOffsetMs)
        }
        return signed(unsigned)
    }

    /// Extend a Subscription Renewal Date; the `RENEWAL_EXTENDED` notification
    /// to send. The same `requestIdentifier` again gets the first answer and extends nothing.
    func extendRenewalDate(
        _ originalTransactionID: String, _ request: ExtendRenewalDateRequest, at environment: AppleEnvironment
    ) -> (reply: SimServerAPIReply, notifications: [SimNotification]) {
        guard let days = request.extendByDays, (1...90).contains(days) else { return (.error(400, .invalidExtendByDays), []) }
        guard let reason = request.extendReasonCode, (0...3).contains(reason) else {
            return (.error(400, .invalidExtendReasonCode), [])
        }
        guard let requestID = request.requestIdentifier, (1...128).contains(requestID.count) else {
            return (.error(400, .invalidRequestIdentifier), [])
        }
        return state.withLock { state in
            if let done = state.extensions[requestID] { return (.json(done), []) }
            guard state.store.subscriptions[originalTransactionID]?.environment == environment else {
                return (.error(404, .originalTransactionIdNotFound), [])
            }
            let now = wallClock() + state.clockOffsetMs
            let extended: (transaction: SimTransaction, notification: SimNotification)
            do {
                extended = try state.store.extend(originalTransactionID: originalTransactionID, days: Int(days), now: now)
            } catch {
                return (.error(403, .subscriptionExtensionIneligible), [])
            }
            let answer = ExtendRenewalDateResponse(
                originalTransactionId: originalTransactionID, webOrderLineItemId: extended.transaction.webOrderLineItemID,
                success: true, effectiveDate: extended.transaction.expiresMs)
            state.extensions[requestID] = answer
            return (.json(answer), [extended.notification])
        }
    }

    /// Send Consumption Information: kept, as Apple keeps it for its refund decision.
    func recordConsumption(
        _ transactionID: String, _ information: ConsumptionRequest, at environment: AppleEnvironment
    ) -> SimServerAPIReply {
        guard information.customerConsented == true else { return .error(400, .invalidCustomerConsented) }
        return state.withLock { state in
            guard state.store.transaction(transactionID, in: environment) != nil else {
                return .error(404, .transactionIdNotFound)
            }
            state.consumption[transactionID] = information
            return .accepted
        }
    }

    /// A CONSUMPTION_REQUEST notification about `transactionID`: the customer asked
    /// for a refund of it (what Apple sends before it decides).
    func consumptionRequest(transactionID: String) throws(SimStore.Failure) -> SimNotification {
        try state.withLock { state throws(SimStore.Failure) in
            guard let transaction = state.store.transactions[transactionID] else { throw .unknownTransaction }
            return SimNotification(
                type: "CONSUMPTION_REQUEST", originalTransactionID: transaction.originalID,
                environment: transaction.environment, transactionID: transactionID)
        }
    }

    /// What was last sent about `transactionID` with Send Consumption Information.
    func consumptionInformation(_ transactionID: String) -> ConsumptionRequest? {
        state.withLock { $0.consumption[transactionID] }
    }

    /// Request a Test Notification: the TEST notification, recorded, for the notifier to send.
    func requestTestNotification(at environment: AppleEnvironment) -> SimNotificationRecord {
        state.withLock { state in
            let record = SimNotificationRecord(
                uuid: UUID().uuidString, type: "TEST", subtype: nil, environment: environment,
                signedDateMs: wallClock() + state.clockOffsetMs, account: nil, transactionClaims: nil,
                renewalClaims: nil, testToken: UUID().uuidString)
            Self.append(record, to: &state)
            return record
        }
    }

    /// Get Test Notification Status; 4040008 for a token this environment never gave.
    func testNotificationStatus(_ token: String, at environment: AppleEnvironment) -> SimServerAPIReply {
        let record = state.withLock { state in
            state.notificationHistory.last { $0.testToken == token && $0.environment == environment }
        }
        guard let record, let payload = signedPayload(record) else { return .error(404, .testNotificationNotFound) }
        return .json(CheckTestNotificationResponse(signedPayload: payload, sendAttempts: record.sendAttempts))
    }

    /// Get Notification History: the environment's notifications signed
    /// between `startDate` and `endDate` (the simulator's clock), filtered,
    /// a page at a time; the pagination token is where the next page starts.
    func notificationHistory(
        _ request: NotificationHistoryRequest, paginationToken: String?, at environment: AppleEnvironment
    ) -> SimServerAPIReply {
        guard let start = request.startDate, start >= 0 else { return .error(400, .invalidStartDate) }
        guard let end = request.endDate, end >= start else { return .error(400, .invalidEndDate) }
        var offset = 0
        if let paginationToken {
            guard let parsed = Int(paginationToken), parsed >= 0 else { return .error(400, .invalidPaginationToken) }
            offset = parsed
        }
        let (records, hasMore) = state.withLock { state in
            let customer = request.transactionId.map { state.store.transaction($0, in: environment)?.account }
            let matching = state.notificationHistory.filter { record in
                record.environment == environment && (start...end).contains(record.signedDateMs)
                    && request.notificationType.map { $0 == record.type } ?? true
                    && customer.map { $0 != nil && $0 == record.account } ?? true
                    && (request.onlyFailures != true || !record.delivered)
            }
            let page = matching.dropFirst(offset).prefix(serverAPIResponder.pageSize)
            return (Array(page), offset + page.count < matching.count)
        }
        var items: [NotificationHistoryResponseItem] = []
        for record in records {
            guard let payload = signedPayload(record) else { continue }
            items.append(NotificationHistoryResponseItem(signedPayload: payload, sendAttempts: record.sendAttempts))
        }
        return .json(
            NotificationHistoryResponse(
                paginationToken: hasMore ? String(offset + records.count) : nil, hasMore: hasMore,
                notificationHistory: items))
    }

    /// Keeps a notification the store's change caused, with what it says now;
    /// nil when its transaction is unknown.
    func record(_ notification: SimNotification) -> SimNotificationRecord? {
        state.withLock { state -> SimNotificationRecord? in
            let subscription = state.store.subscriptions[notification.originalTransactionID]
            let transactionID = notification.transactionID ?? subscription?.transactionIDs.last ?? notification.originalTransactionID
            guard let transaction = state.store.transactions[transactionID] else { return nil }
            let now = wallClock() + state.clockOffsetMs
            let renewal = subscription.map { subscription in
                let renewsAt = subscription.transactionIDs.last.flatMap { state.store.transactions[$0]?.expiresMs }
                return SimJSONWriter.data(SimSignedClaims.renewal(subscription, renewalDate: renewsAt, now: now))
            }
            let record = SimNotificationRecord(
                uuid: UUID().uuidString, type: notification.type,
                subtype: SimSignedClaims.subtype(of: notification, subscription: subscription),
                environment: transaction.environment, signedDateMs: now,
                account: transaction.account,
                transactionClaims: SimJSONWriter.data(SimSignedClaims.transaction(transaction, bundleID: bundleID, now: now)),
                renewalClaims: renewal, testToken: nil)
            Self.append(record, to: &state)
            return record
        }
    }

    /// One delivery attempt of a recorded notification (Apple's SendAttemptResult).
    func recordAttempt(_ uuid: String, result: String) {
        state.withLock { state in
            let now = wallClock() + state.clockOffsetMs
            guard let index = state.notificationHistory.lastIndex(where: { $0.uuid == uuid }) else { return }
            state.notificationHistory[index].sendAttempts.append(SendAttemptItem(attemptDate: now, sendAttemptResult: result))
        }
    }

    /// A recorded notification as Apple signs it: `{"signedPayload"}`'s JWS,
    /// nesting its signed transaction and renewal info. Signed on each call,
    /// outside the lock (three signatures).
    func signedPayload(_ record: SimNotificationRecord) -> String? {
        do {
            var data: [String: Any] = [
                "bundleId": bundleID, "bundleVersion": "1", "environment": SimSignedClaims.environmentName(record.environment),
            ]
            if record.environment == .production { data["appAppleId"] = serverAPIResponder.appAppleID }
            if let transaction = record.transactionClaims { data["signedTransactionInfo"] = try signer.sign(transaction) }
            if let renewal = record.renewalClaims { data["signedRenewalInfo"] = try signer.sign(renewal) }
            var payload: [String: Any] = [
                "notificationType": record.type, "notificationUUID": record.uuid, "data": data, "version": "2.0",
                "signedDate": record.signedDateMs,
            ]
            if let subtype = record.subtype { payload["subtype"] = subtype }
            return try signer.sign(SimJSONWriter.data(payload))
        } catch {
            return nil
        }
    }

    private static func append(_ record: SimNotificationRecord, to state: inout State) {
        state.notificationHistory.append(record)
        if state.notificationHistory.count > SimNotificationRecord.retained {
            state.notificationHistory.removeFirst(state.notificationHistory.count - SimNotificationRecord.retained)
        }
    }

    /// Signs what `unsigned` holds and puts the signatures in; a failed signature
    /// (a broken build: the chain is a constant) is Apple's 500.
    private func signed(_ unsigned: SimUnsignedReply) -> SimServerAPIReply {
        var signatures: [String] = []
        for claims in unsigned.claims {
            guard let jws = try? signer.sign(claims) else { return .error(500, .generalInternal) }
            signatures.append(jws)
        }
        return unsigned.assemble(signatures)
    }
}
