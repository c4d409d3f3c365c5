import Contracts
import Foundation
import Logging
import PostgresTestServer
import StorekeeperCore
import Testing

@testable import Ledger

/// The stores every rule test runs on: the same rules must give the same answers on both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// A ledger driven straight through its rules, one unit per commit, at a time
/// the test chooses: SQLite in memory, or a new database on the tests'
/// PostgreSQL server (whose events are numbered after each commit, as the
/// elected sequencer numbers them).
struct LedgerFixture {
    let store: any LedgerStore
    let rules: LedgerRules

    init(
        _ kind: StoreKind = .sqlite, policy: BindingPolicy = .transfer, store: SQLiteLedgerStore? = nil,
        catalog: ProductCatalog? = nil, sendsConsumptionInfo: Bool = false
    ) async throws {
        switch kind {
        case .sqlite: self.store = try store ?? SQLiteLedgerStore.inMemory()
        case .postgres:
            let url = try await PostgresTestServer.shared().newDatabase()
            self.store = try await PostgresLedgerStore.open(url: url, logger: Logger(label: "test"), readers: 1)
        }
        self.rules = LedgerRules(policy: policy, catalog: catalog, sendsConsumptionInfo: sendsConsumptionInfo)
    }

    /// Drives `store` as it is (a PostgreSQL store opened on an imported database).
    init(on store: any LedgerStore, policy: BindingPolicy = .transfer, catalog: ProductCatalog? = nil) {
        self.store = store
        self.rules = LedgerRules(policy: policy, catalog: catalog)
    }

    func apply(_ work: LedgerWork, at now: Int64, requestID: String = "test") async throws -> LedgerWorkOutput {
        let rules = self.rules
        let outcomes = try await store.commit(units: 1) { _, session in
            try rules.apply(work, requestID: requestID, now: now, session: session)
        }
        if let postgres = store as? PostgresLedgerStore { try await postgres.numberPendingEvents() }
        return try outcomes[0].result.get()
    }

    func record(
        _ user: String, _ result: VerifyResult, at now: Int64, requestID: String = "test"
    ) async throws -> RecordOutcome {
        let request = RecordRequest.with {
            $0.userID = user
            $0.result = result
        }
        guard case .recorded(let outcome) = try await apply(.record(request), at: now, requestID: requestID)
        else { throw Unexpected() }
        return outcome
    }

    func notify(_ notification: NotificationApply, at now: Int64) async throws -> Bool {
        guard case .notified(let outcome) = try await apply(.notification(notification), at: now) else { throw Unexpected() }
        return outcome.applied
    }

    func entitlements(_ user: String, at now: Int64) async throws -> [Entitlement] {
        let rules = self.rules
        return try await store.read { try rules.entitlements(of: user, at: now, reader: $0).entitlements }
    }

    func events(after seq: UInt64 = 0) async throws -> [LedgerEvent] {
        try await store.read { try $0.events(after: seq, limit: 100_000) }
    }

    func topics(after seq: UInt64 = 0) async throws -> [String] { try await events(after: seq).map(\.topic) }

    func headSeq() async throws -> UInt64 { try await store.read { try $0.headSeq() } }

    func subscription(_ otid: String, _ environment: AppleEnvironment = .sandbox) async throws -> SubscriptionRecord? {
        try await store.read { try $0.subscription(SubscriptionKey(environment, otid)) }
    }

    func owner(_ otid: String, _ environment: AppleEnvironment = .sandbox) async throws -> String? {
        try await store.read { try $0.owner(of: SubscriptionKey(environment, otid)) }
    }

    struct Unexpected: Error {}
}

/// Builders for the shared contract's messages, with Apple-like numbers.
enum Make {
    static let minute: Int64 = 60_000
    static let t0: Int64 = 1_574_316_980_000

    static func transaction(
        _ id: String, otid: String? = nil, product: String = "com.example.pro.monthly", purchased: Int64,
        expires: Int64? = nil, cancelled: Int64? = nil, upgraded: Bool = false
    ) -> Transaction {
        Transaction.with {
            $0.transactionID = id
            $0.originalTransactionID = otid ?? id
            $0.productID = product
            $0.quantity = 1
            $0.purchaseDateMs = purchased
            $0.originalPurchaseDateMs = purchased
            if let expires { $0.expiresDateMs = expires }
            if let cancelled { $0.cancellationDateMs = cancelled }
            $0.isUpgraded = upgraded
        }
    }

    /// A monthly-style subscription: `count` periods of `period` ms from t0, ids otid, otid+1, ...
    static func renewals(_ otid: String, count: Int, period: Int64 = 5 * minute, product: String = "com.example.pro.monthly")
        -> [Transaction]
    {
        (0..<count).map { index in
            let start = t0 + Int64(index) * period
            return transaction(
                index == 0 ? otid : "\(otid)-\(index)", otid: otid, product: product, purchased: start,
                expires: start + period)
        }
    }

    static func result(
        _ transactions: [Transaction], environment: AppleEnvironment = .sandbox, pending: [PendingRenewal] = [],
        requestDate: Int64 = 0, latestReceipt: String = "bGF0ZXN0"
    ) -> VerifyResult {
        VerifyResult.with {
            $0.environment = environment
            $0.style = .ios7
            $0.bundleID = "com.example.app"
            $0.transactions = transactions
            $0.pendingRenewals = pending
            $0.requestDateMs = requestDate
            $0.latestReceipt = latestReceipt
        }
    }

    static func pending(
        _ otid: String, autoRenew: Bool = true, product: String = "com.example.pro.monthly", billingRetry: Bool? = nil,
        grace: Int64? = nil, intent: Int32? = nil, priceConsent: Int32? = nil
    ) -> PendingRenewal {
        PendingRenewal.with {
            $0.originalTransactionID = otid
            $0.productID = product
            $0.autoRenewProductID = product
            $0.autoRenewStatus = autoRenew
            if let billingRetry { $0.isInBillingRetryPeriod = billingRetry }
            if let grace { $0.gracePeriodExpiresDateMs = grace }
            if let intent { $0.expirationIntent = intent }
            if let priceConsent { $0.priceConsentStatus = priceConsent }
        }
    }

    static func notification(
        _ type: String, id: String? = nil, otid: String, transactions: [Transaction] = [], pending: [PendingRenewal] = [],
        autoRenew: Bool? = nil, autoRenewProduct: String = "", signed: Int64 = 0
    ) -> NotificationApply {
        NotificationApply.with {
            $0.notificationID = id ?? "\(type)-\(otid)-\(transactions.count)-\(signed)"
            $0.version = .v1
            $0.notificationType = type
            $0.environment = .sandbox
            $0.bundleID = "com.example.app"
            $0.originalTransactionID = otid
            $0.transactions = transactions
            $0.pendingRenewals = pending
            if let autoRenew { $0.autoRenewStatus = autoRenew }
            $0.autoRenewProductID = autoRenewProduct
            $0.signedDateMs = signed
            $0.latestReceipt = "bGF0ZXN0"
        }
    }
}
