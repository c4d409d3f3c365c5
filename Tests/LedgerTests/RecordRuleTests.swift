import Contracts
import Testing

@testable import Ledger

@Suite("Record: dedup, refunds, stale receipts, upgrades")
struct RecordRuleTests {
    let t0 = Make.t0
    let minute = Make.minute

    @Test(arguments: StoreKind.allCases) func grantsEachTransactionOnceAndAReplayGrantsNothing(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let receipt = Make.result(Make.renewals("1000", count: 3) + [Make.transaction("2000", purchased: t0)])
        let first = try await ledger.record("u-1", receipt, at: t0 + 20 * minute)
        #expect(Set(first.granted.map(\.transactionID)) == ["1000", "1000-1", "1000-2", "2000"])
        #expect(first.alreadyGranted.isEmpty)
        #expect(try await ledger.topics() == Array(repeating: "transaction.granted", count: 4))

        for _ in 0..<3 {
            let replay = try await ledger.record("u-1", receipt, at: t0 + 21 * minute)
            #expect(replay.granted.isEmpty)
            #expect(Set(replay.alreadyGranted) == ["1000", "1000-1", "1000-2", "2000"])
        }
        #expect(try await ledger.headSeq() == 4, "a replay writes no event")
    }

    @Test(arguments: StoreKind.allCases) func expiryIsTheGreatestOverAllTransactionsWhateverTheirOrder(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let renewals = Make.renewals("1000", count: 5)
        let outcome = try await ledger.record("u-1", Make.result(renewals.reversed()), at: t0)
        #expect(outcome.entitlements.count == 1)
        #expect(outcome.entitlements[0].expiresDateMs == t0 + 25 * minute)
        #expect(outcome.entitlements[0].state == .active)
        #expect(outcome.entitlements[0].active)
    }

    @Test(arguments: StoreKind.allCases) func aStaleReceiptNeverShortensTheSubscription(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let renewals = Make.renewals("1000", count: 4)
        _ = try await ledger.record("u-1", Make.result(renewals, requestDate: t0 + 16 * minute), at: t0 + 16 * minute)
        let stale = try await ledger.record(
            "u-1", Make.result(Array(renewals.prefix(1)), requestDate: t0), at: t0 + 17 * minute)
        #expect(stale.entitlements.first?.expiresDateMs == t0 + 20 * minute)
        #expect(stale.entitlements.first?.state == .active)
    }

    @Test(arguments: StoreKind.allCases) func aStaleReceiptDoesNotOverwriteNewerRenewalInfo(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let renewals = Make.renewals("1000", count: 2)
        _ = try await ledger.record(
            "u-1", Make.result(renewals, pending: [Make.pending("1000", autoRenew: false)], requestDate: t0 + 9 * minute),
            at: t0 + 9 * minute)
        _ = try await ledger.record(
            "u-1", Make.result(renewals, pending: [Make.pending("1000", autoRenew: true)], requestDate: t0 + 2 * minute),
            at: t0 + 10 * minute)
        #expect(try await ledger.subscription("1000")?.autoRenew == false)
    }

    @Test(arguments: StoreKind.allCases) func aRefundAfterAGrantRevokesItAndEndsTheSubscription(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let purchase = Make.transaction("1000", purchased: t0, expires: t0 + 30 * minute)
        _ = try await ledger.record("u-1", Make.result([purchase]), at: t0 + minute)
        var refunded = purchase
        refunded.cancellationDateMs = t0 + 10 * minute
        refunded.cancellationReason = 1
        let outcome = try await ledger.record("u-1", Make.result([refunded]), at: t0 + 11 * minute)
        #expect(outcome.granted.isEmpty)
        #expect(outcome.revoked.map(\.transactionID) == ["1000"])
        #expect(outcome.revoked.first?.cancellationDateMs == t0 + 10 * minute)
        #expect(outcome.entitlements.first?.state == .revoked)
        #expect(outcome.entitlements.first?.active == false)
        let events = try await ledger.events()
        #expect(events.map(\.topic) == ["transaction.granted", "transaction.revoked"])
        #expect(events[1].transactionRevoked.cancellationReason == 1)
        #expect(events[1].userID == "u-1")

        let again = try await ledger.record("u-1", Make.result([refunded]), at: t0 + 12 * minute)
        #expect(again.revoked.count == 1)
        #expect(try await ledger.headSeq() == 2, "a refund is revoked once")
    }

    @Test(arguments: StoreKind.allCases) func aRefundedTransactionIsNeverGrantedEvenByAStaleReceipt(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let purchase = Make.transaction("1000", purchased: t0)
        var refunded = purchase
        refunded.cancellationDateMs = t0 + minute
        let first = try await ledger.record("u-1", Make.result([refunded]), at: t0 + 2 * minute)
        #expect(first.granted.isEmpty)
        #expect(first.revoked.count == 1)
        let stale = try await ledger.record("u-1", Make.result([purchase]), at: t0 + 3 * minute)
        #expect(stale.granted.isEmpty)
        #expect(stale.revoked.map(\.transactionID) == ["1000"])
        #expect(try await ledger.headSeq() == 0)
    }

    @Test(arguments: StoreKind.allCases) func anUpgradeIsNotARefund(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let basic = Make.transaction(
            "1000", product: "basic.monthly", purchased: t0, expires: t0 + 30 * minute, cancelled: t0 + 10 * minute,
            upgraded: true)
        let pro = Make.transaction(
            "1001", otid: "1000", product: "pro.monthly", purchased: t0 + 10 * minute, expires: t0 + 40 * minute)
        let outcome = try await ledger.record("u-1", Make.result([pro, basic]), at: t0 + 11 * minute)
        #expect(Set(outcome.granted.map(\.transactionID)) == ["1000", "1001"])
        #expect(outcome.revoked.isEmpty)
        let entitlement = try #require(outcome.entitlements.first)
        #expect(entitlement.state == .active)
        #expect(entitlement.productID == "pro.monthly")
        #expect(entitlement.expiresDateMs == t0 + 40 * minute)
        #expect(try await ledger.topics().contains("transaction.revoked") == false)
    }

    @Test(arguments: StoreKind.allCases) func anUpgradeLearnedLaterKeepsTheSubscriptionActive(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let basic = Make.transaction("1000", product: "basic.monthly", purchased: t0, expires: t0 + 30 * minute)
        _ = try await ledger.record("u-1", Make.result([basic]), at: t0 + minute)
        var replaced = basic
        replaced.cancellationDateMs = t0 + 10 * minute
        replaced.isUpgraded = true
        let pro = Make.transaction(
            "1001", otid: "1000", product: "pro.monthly", purchased: t0 + 10 * minute, expires: t0 + 40 * minute)
        let outcome = try await ledger.record("u-1", Make.result([replaced, pro]), at: t0 + 11 * minute)
        #expect(outcome.revoked.isEmpty)
        #expect(outcome.entitlements.first?.productID == "pro.monthly")
        // A plan change is one subscription.changed, not also a renewal.
        #expect(try await ledger.topics() == ["transaction.granted", "transaction.granted", "subscription.changed"])
        let changed = try #require(try await ledger.events().last?.subscriptionChanged)
        #expect(changed.change == "upgrade")
        #expect((changed.fromProductID, changed.toProductID) == ("basic.monthly", "pro.monthly"))
        #expect(changed.effectiveDateMs == t0 + 10 * minute)
    }

    @Test(arguments: StoreKind.allCases) func oneOffPurchasesAreGrantedButAreNotSubscriptions(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let outcome = try await ledger.record(
            "u-1", Make.result([Make.transaction("c1", product: "coins.100", purchased: t0)]), at: t0)
        #expect(outcome.granted.map(\.productID) == ["coins.100"])
        #expect(outcome.granted.first?.hasExpiresDateMs == false)
        #expect(outcome.entitlements.isEmpty)
    }

    @Test(arguments: StoreKind.allCases) func environmentsAreSeparateKeySpaces(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let purchase = Make.transaction("1000", purchased: t0)
        let sandbox = try await ledger.record("u-1", Make.result([purchase], environment: .sandbox), at: t0)
        let production = try await ledger.record("u-1", Make.result([purchase], environment: .production), at: t0)
        #expect(sandbox.granted.count == 1)
        #expect(production.granted.count == 1)
    }

    @Test(arguments: ["", String(repeating: "u", count: 129), "u\u{0}1", "line\nbreak"])
    func badUserIDsAreRefusedAndChangeNothing(_ user: String) async throws {
        let ledger = try await LedgerFixture()
        await #expect(throws: LedgerFailure.self) {
            _ = try await ledger.record(user, Make.result([Make.transaction("1000", purchased: t0)]), at: t0)
        }
        #expect(try await ledger.headSeq() == 0)
        #expect(try await ledger.owner("1000") == nil)
    }

    @Test(arguments: StoreKind.allCases) func longestAllowedUserIDIsAccepted(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let user = String(repeating: "é", count: 128)
        let outcome = try await ledger.record(user, Make.result([Make.transaction("1000", purchased: t0)]), at: t0)
        #expect(outcome.granted.count == 1)
    }

    @Test(arguments: StoreKind.allCases) func aReceiptWithoutPurchasesOrEnvironmentIsRefused(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        await #expect(throws: LedgerFailure.noPurchases) {
            _ = try await ledger.record("u-1", Make.result([]), at: t0)
        }
        await #expect(throws: LedgerFailure.self) {
            _ = try await ledger.record(
                "u-1", Make.result([Make.transaction("1", purchased: t0)], environment: .unspecified), at: t0)
        }
    }
}
