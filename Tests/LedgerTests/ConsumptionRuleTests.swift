import Contracts
import Testing

@testable import Ledger

/// Consumption information for CONSUMPTION_REQUEST notifications
/// (`STOREKEEPER_SEND_CONSUMPTION_INFO`), on both stores: built from what the
/// ledger knows when Apple asks, kept with the notification, claimed with
/// back-off, dropped once done or once Apple no longer waits.
@Suite("Consumption information")
struct ConsumptionRuleTests {
    let t0 = Make.t0
    let minute = Make.minute
    let day: Int64 = 86_400_000
    let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    func consumable(_ id: String, at purchased: Int64, token: String = "") -> Transaction {
        var transaction = Make.transaction(id, product: "com.example.gems", purchased: purchased)
        transaction.kind = .consumable
        transaction.appAccountToken = token
        return transaction
    }

    func priced(_ id: String, at purchased: Int64, _ milliunits: Int64, _ currency: String = "USD") -> Transaction {
        var transaction = consumable(id, at: purchased)
        transaction.priceMilliunits = milliunits
        transaction.currency = currency
        return transaction
    }

    func consumptionRequest(_ transaction: Transaction, signed: Int64, id: String? = nil) -> NotificationApply {
        var notification = Make.notification(
            "CONSUMPTION_REQUEST", id: id, otid: transaction.originalTransactionID, transactions: [transaction], signed: signed)
        notification.version = .v2
        return notification
    }

    func due(_ ledger: LedgerFixture, at now: Int64) async throws -> [PendingConsumption] {
        try await ledger.store.read { try $0.consumptionsDue(now: now, limit: 100) }
    }

    @Test(arguments: StoreKind.allCases) func aCreditedPurchaseIsDeclaredDeliveredWithItsAccountsTenure(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, sendsConsumptionInfo: true)
        // The user's first purchase, five days before the refund request; the one asked about, a day before.
        _ = try await ledger.record("u-1", Make.result([consumable("100", at: t0)]), at: t0)
        let gems = consumable("200", at: t0 + 4 * day, token: token)
        _ = try await ledger.record("u-1", Make.result([gems]), at: t0 + 4 * day)
        #expect(try await ledger.notify(consumptionRequest(gems, signed: t0 + 5 * day), at: t0 + 5 * day))

        let queued = try await due(ledger, at: t0 + 5 * day)
        #expect(queued.count == 1)
        let request = try #require(queued.first?.request)
        #expect(queued.first?.key == TransactionKey(.sandbox, "200"))
        #expect(request.transactionID == "200" && request.environment == .sandbox)
        #expect(request.customerConsented)
        #expect(request.deliveryStatus == ConsumptionInformation.delivered)
        #expect(request.accountTenure == 2, "3 to 10 days")
        #expect(request.appAccountToken == token)
        #expect(!request.sampleContentProvided)
        // What the ledger does not know is Apple's "undeclared".
        #expect(request.consumptionStatus == 0 && request.platform == 0 && request.playTime == 0)
        #expect(request.lifetimeDollarsPurchased == 0 && request.lifetimeDollarsRefunded == 0)
        #expect(request.userStatus == 0 && request.refundPreference == 0)
        // The same notification again queues nothing more.
        #expect(try await !ledger.notify(consumptionRequest(gems, signed: t0 + 5 * day), at: t0 + 5 * day + 1))
        #expect(try await due(ledger, at: t0 + 6 * day).count == 1)
    }

    @Test(arguments: StoreKind.allCases) func aPurchaseNobodyWasCreditedIsDeclaredUndelivered(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, sendsConsumptionInfo: true)
        let gems = consumable("300", at: t0)
        #expect(try await ledger.notify(consumptionRequest(gems, signed: t0 + minute), at: t0 + minute))
        let request = try #require(try await due(ledger, at: t0 + minute).first?.request)
        #expect(request.deliveryStatus == ConsumptionInformation.notDeliveredOtherReason)
        #expect(request.accountTenure == 0, "no user holds it: undeclared")
        #expect(request.appAccountToken.isEmpty)
    }

    @Test(arguments: StoreKind.allCases) func turnedOffOrVersion1NothingIsQueued(_ store: StoreKind) async throws {
        let off = try await LedgerFixture(store)
        let gems = consumable("400", at: t0)
        _ = try await off.record("u-1", Make.result([gems]), at: t0)
        #expect(try await off.notify(consumptionRequest(gems, signed: t0 + minute), at: t0 + minute))
        #expect(try await due(off, at: t0 + minute).isEmpty)

        let on = try await LedgerFixture(store, sendsConsumptionInfo: true)
        var version1 = consumptionRequest(gems, signed: t0 + minute)
        version1.version = .v1
        #expect(try await on.notify(version1, at: t0 + minute))
        #expect(try await due(on, at: t0 + minute).isEmpty, "version 1 names no single transaction")
    }

    @Test(arguments: StoreKind.allCases) func claimsBackOffAndWhatApplesNoLongerWaitingForIsDropped(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, sendsConsumptionInfo: true)
        let gems = consumable("500", at: t0)
        _ = try await ledger.notify(consumptionRequest(gems, signed: t0), at: t0)
        guard case .consumptions(let first) = try await ledger.apply(.claimConsumptions(limit: 10), at: t0) else { return }
        #expect(first.map(\.attempts) == [1])
        guard case .consumptions(let early) = try await ledger.apply(.claimConsumptions(limit: 10), at: t0 + 29_000)
        else { return }
        #expect(early.isEmpty, "the next attempt waits half a minute")
        guard case .consumptions(let second) = try await ledger.apply(.claimConsumptions(limit: 10), at: t0 + 30_000)
        else { return }
        #expect(second.map(\.attempts) == [2])
        #expect(ConsumptionRules.backoffMs(attempt: 3) == 2 * minute)
        #expect(ConsumptionRules.backoffMs(attempt: 30) == 60 * minute)
        // Apple waits 12 hours: after that it is dropped, not sent.
        guard case .consumptions(let late) = try await ledger.apply(.claimConsumptions(limit: 10), at: t0 + 12 * 60 * minute)
        else { return }
        #expect(late.isEmpty)
        #expect(try await due(ledger, at: t0 + 13 * 60 * minute).isEmpty)

        let other = consumable("600", at: t0)
        _ = try await ledger.notify(consumptionRequest(other, signed: t0), at: t0)
        _ = try await ledger.apply(.consumptionDone(TransactionKey(.sandbox, "600")), at: t0 + 1)
        #expect(try await due(ledger, at: t0 + 60 * minute).isEmpty, "sent: nothing more to do")
    }

    @Test func accountTenureFollowsApplesBuckets() {
        let day = self.day
        #expect(ConsumptionInformation.accountTenure(ageMs: nil) == 0)
        #expect(ConsumptionInformation.accountTenure(ageMs: -1) == 0)
        let expected: [(Int64, Int32)] = [
            (0, 1), (3 * day - 1, 1), (3 * day, 2), (10 * day, 3), (30 * day, 4), (90 * day, 5), (180 * day, 6),
            (365 * day - 1, 6), (365 * day, 7), (3_000 * day, 7),
        ]
        for (age, tenure) in expected { #expect(ConsumptionInformation.accountTenure(ageMs: age) == tenure, "\(age / day) days") }
    }

    @Test(arguments: StoreKind.allCases) func tenureCountsFromTheUsersFirstBindingEvenOfAPurchaseMovedAway(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, sendsConsumptionInfo: true)
        _ = try await ledger.record("u-1", Make.result([consumable("700", at: t0)]), at: t0)
        // The first purchase moves to another user (transfer): u-1 was still there since t0.
        _ = try await ledger.record("u-2", Make.result([consumable("700", at: t0)]), at: t0 + 20 * day)
        let gems = consumable("800", at: t0 + 40 * day)
        _ = try await ledger.record("u-1", Make.result([gems]), at: t0 + 40 * day)
        _ = try await ledger.notify(consumptionRequest(gems, signed: t0 + 41 * day), at: t0 + 41 * day)
        #expect(try await due(ledger, at: t0 + 41 * day).first?.request.accountTenure == 4, "30 to 90 days")
    }

    @Test(arguments: StoreKind.allCases) func lifetimeSpendIsTheUsersSignedPricesInDollars(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, sendsConsumptionInfo: true)
        // First seen in a receipt (no price), then signed with its price: the price is kept.
        _ = try await ledger.record("u-1", Make.result([consumable("910", at: t0)]), at: t0)
        _ = try await ledger.record("u-1", Make.result([priced("910", at: t0, 30_000)]), at: t0 + minute)
        var refunded = priced("920", at: t0 + day, 25_000)
        _ = try await ledger.record("u-1", Make.result([refunded]), at: t0 + day)
        refunded.cancellationDateMs = t0 + 2 * day
        _ = try await ledger.record("u-1", Make.result([refunded]), at: t0 + 2 * day)
        // Another user's purchase and another environment's do not count.
        _ = try await ledger.record("u-2", Make.result([priced("930", at: t0, 900_000)]), at: t0)
        _ = try await ledger.record("u-1", Make.result([priced("931", at: t0, 900_000)], environment: .production), at: t0)
        let asked = priced("940", at: t0 + 3 * day, 9_990)
        _ = try await ledger.record("u-1", Make.result([asked]), at: t0 + 3 * day)
        _ = try await ledger.notify(consumptionRequest(asked, signed: t0 + 4 * day), at: t0 + 4 * day)

        let request = try #require(try await due(ledger, at: t0 + 4 * day).first?.request)
        #expect(request.lifetimeDollarsPurchased == 3, "$64.99 bought, the refunded one included: $50-99.99")
        #expect(request.lifetimeDollarsRefunded == 2, "$25 refunded: $0.01-49.99")
    }

    @Test(arguments: StoreKind.allCases) func lifetimeSpendIsUndeclaredWhenAPriceIsUnknownOrNotInDollars(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, sendsConsumptionInfo: true)
        _ = try await ledger.record("u-1", Make.result([consumable("950", at: t0)]), at: t0)
        let asked = priced("951", at: t0 + day, 9_990)
        _ = try await ledger.record("u-1", Make.result([asked]), at: t0 + day)
        _ = try await ledger.notify(consumptionRequest(asked, signed: t0 + 2 * day), at: t0 + 2 * day)
        let unpriced = try #require(try await due(ledger, at: t0 + 2 * day).first?.request)
        #expect(unpriced.lifetimeDollarsPurchased == 0 && unpriced.lifetimeDollarsRefunded == 0)

        _ = try await ledger.record("u-2", Make.result([priced("960", at: t0, 4_990, "EUR")]), at: t0)
        let euros = priced("961", at: t0 + day, 9_990)
        _ = try await ledger.record("u-2", Make.result([euros]), at: t0 + day)
        _ = try await ledger.notify(consumptionRequest(euros, signed: t0 + 2 * day), at: t0 + 2 * day)
        let converted = try #require(
            try await due(ledger, at: t0 + 2 * day).first { $0.key.transactionID == "961" }?.request)
        #expect(converted.lifetimeDollarsPurchased == 0, "the ledger converts no money")
    }

    @Test func lifetimeDollarsFollowApplesRanges() {
        let expected: [(Int64, Int32)] = [
            (0, 1), (10, 2), (49_990, 2), (50_000, 3), (99_990, 3), (100_000, 4), (499_990, 4), (500_000, 5),
            (999_990, 5), (1_000_000, 6), (1_999_990, 6), (2_000_000, 7), (90_000_000, 7),
        ]
        for (amount, value) in expected {
            #expect(ConsumptionInformation.lifetimeDollars(milliunits: amount) == value, "\(amount)")
        }
    }
}
