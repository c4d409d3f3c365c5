import AppleFormats
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
        /// Every notification made, oldest first (Server API: notification history, test status).
        var notificationHistory: [SimNotificationRecord] = []
        /// Renewal-date extensions done, by `requestIdentifier`, with their answers.
        var extensions: [String: ExtendRenewalDateResponse] = [:]
        /// Send Consumption Information, by transaction id.
        var consumption: [String: ConsumptionRequest] = [:]
    }

    public let bundleID: String
    private let responder: SimVerifyResponder
    /// The Server API's answers about purchases (AppStoreSimulator+ServerAPI).
    let serverAPIResponder: SimServerAPIResponder
    /// Signs StoreKit 2 transactions, version 2 notifications and Server API answers (the simulator's test chain).
    let signer: SignedDataSigner
    /// Internal (not private) for the Server API's calls in AppStoreSimulator+ServerAPI: the same lock.
    let state: Mutex<State>
    /// Read on every verifyReceipt: a lock of their own, not the store's.
    private let faultPlans = Mutex<[AppleEnvironment: FaultPlan]>([:])
    private let serverAPIFaultPlans = Mutex<[AppleEnvironment: ServerAPIFaultPlan]>([:])
    /// While set, notifications are made and kept (notification history) but never delivered.
    let dropsNotifications = Atomic<Bool>(false)
    let wallClock: @Sendable () -> Int64

    /// - Parameters:
    ///   - appAppleID: what production Server API answers and notifications name as `appAppleId`.
    ///   - pageSize: items per page of the Server API's paginated answers.
    public init(
        bundleID: String, sharedSecret: String?, appAppleID: Int64 = SimulatorServerAPIKey.appAppleID, pageSize: Int = 20,
        wallClock: @escaping @Sendable () -> Int64 = WallClock.system.now
    ) {
        self.bundleID = bundleID
        self.responder = SimVerifyResponder(bundleID: bundleID, sharedSecret: sharedSecret)
        self.serverAPIResponder = SimServerAPIResponder(bundleID: bundleID, appAppleID: appAppleID, pageSize: max(1, pageSize))
        self.wallClock = wallClock
        self.state = Mutex(State(store: SimStore(bundleID: bundleID)))
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
                environment: request.environment.appleEnvironment, level: request.level, now: wallClock() + state.clockOffsetMs,
                appAccountToken: request.appAccountToken)
        }
    }

    func refund(transactionID: String, reason: Int) throws(SimStore.Failure) -> SimNotification {
        try state.withLock { state throws(SimStore.Failure) in
            try state.store.refund(transactionID: transactionID, reason: reason, now: wallClock() + state.clockOffsetMs)
        }
    }

    /// A plan change (`SimStore.changePlan`); the notification it causes and the new transaction, if one starts now.
    func changePlan(_ request: PlanChangeRequest) throws(SimStore.Failure) -> (notification: SimNotification, transactionID: String?) {
        try state.withLock { state throws(SimStore.Failure) in
            try state.store.changePlan(
                originalTransactionID: request.originalTransactionID, to: request.productID, kind: request.kind,
                period: request.period, level: request.level, now: wallClock() + state.clockOffsetMs)
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

    func setServerAPIFaults(_ plan: ServerAPIFaultPlan, for environment: AppleEnvironment) {
        serverAPIFaultPlans.withLock { $0[environment] = plan }
    }

    /// The fault of the Server API call arriving now, and the `Retry-After` a 429 carries; nil for none.
    func takeServerAPIFault(for environment: AppleEnvironment) -> (ServerAPIFaultPlan.Fault, retryAfterSeconds: Int)? {
        serverAPIFaultPlans.withLock { plans in
            guard var plan = plans[environment], let fault = plan.take() else { return nil }
            plans[environment] = plan
            return (fault, plan.retryAfterSeconds)
        }
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
                "notification_type": notification.version1Type ?? notification.type,
                "environment": original.environment == .sandbox ? "Sandbox" : "PROD",
                "auto_renew_status": subscription?.autoRenew == true ? "true" : "false",
                "auto_renew_product_id": subscription?.autoRenewProductID ?? original.productID,
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

    /// The version 2 body of a recorded notification, as Apple sends it:
    /// `{"signedPayload"}` whose data nests the signed transaction it is about
    /// and the signed renewal info.
    func notificationBodyV2(_ record: SimNotificationRecord) -> Data? {
        signedPayload(record).map { Self.serialize(["signedPayload": $0]) }
    }

    private static func serialize(_ object: [String: Any]) -> Data {
        SimJSONWriter.data(object)
    }
}
