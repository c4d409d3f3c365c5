import Contracts
import Testing

@testable import Ledger

@Suite("A user's purchases come in one order from every store")
struct StoredOrderTests {
    let t0 = Make.t0

    static func names(_ keys: [SubscriptionKey]) -> [String] {
        keys.map { "\($0.originalTransactionID) \(StoredEnvironment.name($0.environment))" }
    }

    static func nonConsumable(_ id: String) -> Transaction {
        var transaction = Make.transaction(id, product: "com.example.removeads", purchased: Make.t0)
        transaction.kind = .nonConsumable
        return transaction
    }

    /// Recorded so that neither the order of recording nor SQLite's index order (environment
    /// first) gives the answer's order: by original transaction id, then environment.
    @Test(arguments: StoreKind.allCases) func byOriginalTransactionThenEnvironment(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        for (otid, environment) in [("2", AppleEnvironment.production), ("1", .sandbox), ("1", .production)] {
            let bought = Make.renewals(otid, count: 1) + [Self.nonConsumable("\(otid)0")]
            _ = try await ledger.record("u", Make.result(bought, environment: environment), at: t0)
        }
        let subscriptions = try await ledger.store.read { try $0.subscriptions(ownedBy: "u") }
        #expect(Self.names(subscriptions.map(\.key)) == ["1 Production", "1 Sandbox", "2 Production"])
        let purchases = try await ledger.store.read { try $0.oneOffPurchases(ownedBy: "u", listedProducts: []) }
        #expect(Self.names(purchases.map(\.subscriptionKey)) == ["10 Production", "10 Sandbox", "20 Production"])
    }

    /// Within one purchase: by purchase date, then transaction id, compared as SQLite's BINARY
    /// collation compares text (by UTF-8 bytes: "10" before "9").
    @Test func withinAPurchaseByDateThenTransactionID() {
        func stored(_ id: String, purchased: Int64) -> StoredTransaction {
            StoredTransaction(
                key: TransactionKey(.production, id), originalTransactionID: "1", productID: "p", quantity: 1,
                purchaseDateMs: purchased, expiresDateMs: nil, cancellationDateMs: nil, cancellationReason: nil,
                isUpgraded: false, grantedTo: "u", grantedAtMs: nil, reinstatedAtMs: nil, kind: nil,
                priceMilliunits: nil, currency: nil)
        }
        let sorted = [stored("9", purchased: 2), stored("9", purchased: 1), stored("10", purchased: 2)]
            .sorted(by: StoredOrder.transactions)
        #expect(sorted.map { "\($0.key.transactionID)@\($0.purchaseDateMs)" } == ["9@1", "10@2", "9@2"])
    }
}
