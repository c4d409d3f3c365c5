import AppleJWS
import Contracts
import Foundation
import Synchronization
import Timekeeping

/// The simulator: its store, a clock that can be moved forward, per
/// environment fault plans, and the server notifications its changes cause.
/// Thread-safe: one lock around the value-type store, nothing slow under it.
/// Answers leave as serialized JSON, built under the lock.
public final class AppStoreSimulator: Sendable {
    struct State: Sendable {
        var store = SimStore()
        var clockOffsetMs: Int64 = 0
        var notificationsSent = 0
    }

    public let bundleID: String
    private let responder: SimVerifyResponder
    /// Signs StoreKit 2 transactions and version 2 notifications (the simulator's test chain).
    private let signer: SignedDataSigner
    private let state = Mutex(State())
    /// Read on every verifyReceipt: a lock of their own, not the store's.
    private let faultPlans = Mutex<[AppleEnvironment: FaultPlan]>([:])
    private let wallClock: @Sendable () -> Int64

    public init(
        bundleID: String, sharedSecret: String?,
        wallClock: @escaping @Sendable () -> Int64 = WallClock.system.now
    ) {
        self.bundleID = bundleID
        self.responder = SimVerifyResponder(bundleID: bundleID, sharedSecret: sharedSecret)
        self.wallClock = wallClock
        // The chain is a constant of this build: failing to load it is a broken build.
        self.signer = try! SignedDataSigner.simulator()
    }

    /// Simulated now: the wall clock plus every advance.
    public var now: Int64 { state.withLock { wallClock() + $0.clockOffsetMs } }

    /// Answers one verifyReceipt call, after renewing what fell due (whose notifications it returns).
    func verify(_ body: [UInt8], at endpoint: AppleEnvironment) -> (json: Data, notifications: [SimNotification]) {
        state.withLock { state in
            let now = wallClock() + state.clockOffsetMs
            let notifications = state.store.renewDue(now: now)
            let answer = responder.answer(body, at: endpoint, store: &state.store, now: now)
            return (Self.serialize(answer), notifications)
        }
    }

    func purchase(_ request: PurchaseRequest) throws(SimStore.Failure) -> SimStore.Purchase {
        try state.withLock { state throws(SimStore.Failure) in
            try state.store.purchase(
                account: request.account, productID: request.productID, type: request.type,
                period: request.period ?? .month, quantity: request.quantity ?? 1,
                environment: request.environment.appleEnvironment, now: wallClock() + state.clockOffsetMs)
        }
    }

    func refund(transactionID: String, reason: Int) throws(SimStore.Failure) -> SimNotification {
        try state.withLock { state throws(SimStore.Failure) in
            try state.store.refund(transactionID: transactionID, reason: reason, now: wallClock() + state.clockOffsetMs)
        }
    }

    func setAutoRenew(originalTransactionID: String, enabled: Bool) throws(SimStore.Failure) -> SimNotification? {
        try state.withLock { state throws(SimStore.Failure) in
            try state.store.setAutoRenew(originalTransactionID: originalTransactionID, enabled: enabled)
        }
    }

    /// Moves the clock forward and renews what fell due.
    func advanceClock(byMilliseconds delta: Int64) -> [SimNotification] {
        state.withLock { state in
            state.clockOffsetMs += max(0, delta)
            return state.store.renewDue(now: wallClock() + state.clockOffsetMs)
        }
    }

    /// Moves the clock to the end of the subscription's current period, so
    /// that it renews now (if auto-renew is on); what that caused, and the new expiry.
    func renewNow(originalTransactionID: String) throws(SimStore.Failure) -> (notifications: [SimNotification], expiresMs: Int64) {
        try state.withLock { state throws(SimStore.Failure) in
            let expires = try state.store.currentExpiry(of: originalTransactionID)
            state.clockOffsetMs = max(state.clockOffsetMs, expires - wallClock())
            let notifications = state.store.renewDue(now: wallClock() + state.clockOffsetMs)
            return (notifications, try state.store.currentExpiry(of: originalTransactionID))
        }
    }

    func setFaults(_ plan: FaultPlan, for environment: AppleEnvironment) {
        faultPlans.withLock { $0[environment] = plan }
    }

    func faults(for environment: AppleEnvironment) -> FaultPlan {
        faultPlans.withLock { $0[environment] ?? FaultPlan() }
    }

    /// The version 1 notification body, as Apple sends it: `password` and a
    /// `unified_receipt` with the account's current state; nil when the
    /// transaction is unknown.
    func notificationBody(_ notification: SimNotification, password: String?) -> Data? {
        state.withLock { state -> Data? in
            guard let original = state.store.transactions[notification.originalTransactionID] else { return nil }
            let now = wallClock() + state.clockOffsetMs
            let subscription = state.store.subscriptions[original.originalID]
            let token = state.store.mintReceipt(account: original.account, environment: original.environment, now: now)
            var request: [String: Any] = ["receipt-data": token]
            if let password { request["password"] = password }
            let unified = responder.answer(
                Array(Self.serialize(request)), at: original.environment, store: &state.store, now: now)
            var body: [String: Any] = [
                "notification_type": notification.type,
                "environment": original.environment == .sandbox ? "Sandbox" : "PROD",
                "auto_renew_status": subscription?.autoRenew == true ? "true" : "false",
                "auto_renew_product_id": subscription?.productID ?? original.productID,
                "auto_renew_status_change_date_ms": String(now),
                "bid": bundleID,
                "bvrs": "1",
                "original_transaction_id": original.originalID,
                "unified_receipt": [
                    "status": unified["status"] ?? 0,
                    "environment": SimVerifyResponder.name(original.environment),
                    "latest_receipt": unified["latest_receipt"] ?? token,
                    "latest_receipt_info": unified["latest_receipt_info"] ?? [],
                    "pending_renewal_info": unified["pending_renewal_info"] ?? [],
                ] as [String: Any],
            ]
            if let password { body["password"] = password }
            state.notificationsSent += 1
            return Self.serialize(body)
        }
    }

    /// StoreKit 2's JWS of one transaction (what `Transaction.jwsRepresentation`
    /// gives the app); nil when the transaction is unknown.
    func signedTransaction(_ transactionID: String) -> String? {
        let claims = state.withLock { state -> Data? in
            guard let transaction = state.store.transactions[transactionID] else { return nil }
            let now = wallClock() + state.clockOffsetMs
            return Self.serialize(SimSignedClaims.transaction(transaction, bundleID: bundleID, now: now))
        }
        // Signed outside the lock: a signature costs more than everything done under it.
        return claims.flatMap { try? signer.sign($0) }
    }

    /// The version 2 body, as Apple sends it: `{"signedPayload"}` whose data
    /// nests the signed transaction it is about and the signed renewal info;
    /// nil when the transaction is unknown.
    func notificationBodyV2(_ notification: SimNotification) -> Data? {
        // The claims under the lock; the three signatures outside it.
        let claims = state.withLock { state -> (transaction: Data, renewal: Data?, environment: String, now: Int64, subtype: String?)? in
            let subscription = state.store.subscriptions[notification.originalTransactionID]
            let transactionID = notification.transactionID ?? subscription?.transactionIDs.last ?? notification.originalTransactionID
            guard let transaction = state.store.transactions[transactionID] else { return nil }
            let now = wallClock() + state.clockOffsetMs
            state.notificationsSent += 1
            let renewal = subscription.map { subscription in
                let renewsAt = subscription.transactionIDs.last.flatMap { state.store.transactions[$0]?.expiresMs }
                return Self.serialize(SimSignedClaims.renewal(subscription, renewalDate: renewsAt, now: now))
            }
            return (
                Self.serialize(SimSignedClaims.transaction(transaction, bundleID: bundleID, now: now)), renewal,
                SimSignedClaims.environmentName(transaction.environment), now,
                SimSignedClaims.subtype(of: notification, subscription: subscription)
            )
        }
        guard let claims else { return nil }
        do {
            var data: [String: Any] = [
                "bundleId": bundleID, "bundleVersion": "1", "environment": claims.environment,
                "signedTransactionInfo": try signer.sign(claims.transaction),
            ]
            if let renewal = claims.renewal { data["signedRenewalInfo"] = try signer.sign(renewal) }
            var payload: [String: Any] = [
                "notificationType": notification.type, "notificationUUID": UUID().uuidString, "data": data,
                "version": "2.0", "signedDate": claims.now,
            ]
            if let subtype = claims.subtype { payload["subtype"] = subtype }
            return Self.serialize(["signedPayload": try signer.sign(Self.serialize(payload))])
        } catch {
            return nil
        }
    }

    private static func serialize(_ object: [String: Any]) -> Data {
        SimJSONWriter.data(object)
    }
}
