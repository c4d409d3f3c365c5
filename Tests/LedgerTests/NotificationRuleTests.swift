import Contracts
import Testing

@testable import Ledger

@Suite("Notifications: every version 1 type, each applied once")
struct NotificationRuleTests {
    let t0 = Make.t0
    let minute = Make.minute

    /// A user holding subscription 1000 with two 5-minute periods (expires t0+10 min).
    func subscribed(_ pending: [PendingRenewal] = [Make.pending("1000")]) async throws -> LedgerFixture {
        let ledger = try await LedgerFixture()
        _ = try await ledger.record(
            "u-1", Make.result(Make.renewals("1000", count: 2), pending: pending, requestDate: t0), at: t0 + minute)
        return ledger
    }

    @Test(arguments: ["DID_RENEW", "RENEWAL", "INTERACTIVE_RENEWAL", "DID_RECOVER"])
    func renewalsCreditTheBoundUserAndExtendTheSubscription(_ type: String) async throws {
        let ledger = try await subscribed()
        let head = try await ledger.headSeq()
        let renewals = Make.renewals("1000", count: 3)
        #expect(try await ledger.notify(Make.notification(type, otid: "1000", transactions: renewals, signed: t0 + 9 * minute), at: t0 + 10 * minute))
        let events = try await ledger.events(after: head)
        #expect(events.map(\.topic).prefix(2) == ["transaction.granted", "subscription.renewed"])
        #expect(events[0].userID == "u-1")
        #expect(events[1].subscriptionRenewed.previousExpiresDateMs == t0 + 10 * minute)
        #expect(events[1].subscriptionRenewed.expiresDateMs == t0 + 15 * minute)
        let entitlement = try #require(try await ledger.entitlements("u-1", at: t0 + 12 * minute).first)
        #expect(entitlement.state == .active)
        // The user later presents the receipt: the renewal was already credited.
        let outcome = try await ledger.record("u-1", Make.result(renewals), at: t0 + 13 * minute)
        #expect(outcome.granted.isEmpty)
        #expect(outcome.alreadyGranted.count == 3)
    }

    @Test(arguments: StoreKind.allCases) func initialBuyBeforeAnyUserIsKeptUnclaimedThenCreditedToTheFirstUser(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let purchase = Make.renewals("1000", count: 1)
        #expect(try await ledger.notify(Make.notification("INITIAL_BUY", otid: "1000", transactions: purchase, pending: [Make.pending("1000")]), at: t0))
        #expect(try await ledger.headSeq() == 0, "nobody to credit yet")
        #expect(try await ledger.subscription("1000")?.expiresDateMs == t0 + 5 * minute)
        let outcome = try await ledger.record("u-1", Make.result(purchase), at: t0 + minute)
        #expect(outcome.granted.map(\.transactionID) == ["1000"])
        #expect(outcome.entitlements.first?.autoRenew == true)
    }

    @Test func renewalPreferenceChangeUpdatesTheNextProduct() async throws {
        let ledger = try await subscribed()
        let head = try await ledger.headSeq()
        #expect(try await ledger.notify(Make.notification("DID_CHANGE_RENEWAL_PREF", otid: "1000", autoRenewProduct: "com.example.pro.yearly", signed: t0 + 2 * minute), at: t0 + 2 * minute))
        #expect(try await ledger.subscription("1000")?.autoRenewProductID == "com.example.pro.yearly")
        let events = try await ledger.events(after: head)
        #expect(events.map(\.topic) == ["subscription.changed"])
        #expect(events[0].subscriptionChanged.changed == ["product"])
    }

    @Test func renewalStatusChangeTurnsAutoRenewOff() async throws {
        let ledger = try await subscribed()
        let head = try await ledger.headSeq()
        #expect(try await ledger.notify(Make.notification("DID_CHANGE_RENEWAL_STATUS", otid: "1000", autoRenew: false, signed: t0 + 2 * minute), at: t0 + 2 * minute))
        let entitlement = try #require(try await ledger.entitlements("u-1", at: t0 + 3 * minute).first)
        #expect(entitlement.autoRenew == false)
        #expect(entitlement.state == .active, "still paid until it expires")
        let events = try await ledger.events(after: head)
        #expect(events.map(\.subscriptionChanged.changed) == [["auto_renew"]])
    }

    @Test func failedRenewalGoesToGraceThenBillingRetryAndRecovers() async throws {
        let ledger = try await subscribed()
        let grace = t0 + 16 * minute
        let pending = Make.pending("1000", billingRetry: true, grace: grace, intent: 2)
        #expect(try await ledger.notify(Make.notification("DID_FAIL_TO_RENEW", otid: "1000", pending: [pending], signed: t0 + 10 * minute), at: t0 + 10 * minute))
        #expect(try await ledger.entitlements("u-1", at: t0 + 12 * minute).first?.state == .grace)
        #expect(try await ledger.entitlements("u-1", at: t0 + 12 * minute).first?.active == true)
        #expect(try await ledger.entitlements("u-1", at: t0 + 17 * minute).first?.state == .billingRetry)
        #expect(try await ledger.entitlements("u-1", at: t0 + 17 * minute).first?.active == false)
        let changed = try await ledger.events().last
        #expect(changed?.subscriptionChanged.changed == ["grace", "billing_retry"])

        let renewals = Make.renewals("1000", count: 4)
        #expect(try await ledger.notify(Make.notification("DID_RECOVER", otid: "1000", transactions: renewals, pending: [Make.pending("1000")], signed: t0 + 18 * minute), at: t0 + 18 * minute))
        let entitlement = try #require(try await ledger.entitlements("u-1", at: t0 + 18 * minute).first)
        #expect(entitlement.state == .active)
        #expect(try await ledger.subscription("1000")?.billingRetry == false)
    }

    @Test func failedRenewalWithoutRenewalInfoStillMeansBillingRetry() async throws {
        let ledger = try await subscribed()
        #expect(try await ledger.notify(Make.notification("DID_FAIL_TO_RENEW", otid: "1000", signed: t0 + 10 * minute), at: t0 + 10 * minute))
        #expect(try await ledger.entitlements("u-1", at: t0 + 11 * minute).first?.state == .billingRetry)
    }

    @Test(arguments: ["CANCEL", "REFUND"])
    func cancelAndRefundRevoke(_ type: String) async throws {
        let ledger = try await subscribed()
        var renewals = Make.renewals("1000", count: 2)
        renewals[1].cancellationDateMs = t0 + 7 * minute
        #expect(try await ledger.notify(Make.notification(type, otid: "1000", transactions: renewals, signed: t0 + 7 * minute), at: t0 + 7 * minute))
        let events = try await ledger.events().filter { $0.topic == "transaction.revoked" }
        #expect(events.map(\.transactionRevoked.transactionID) == ["1000-1"])
        let entitlement = try #require(try await ledger.entitlements("u-1", at: t0 + 8 * minute).first)
        #expect(entitlement.state == .revoked)
        #expect(entitlement.expiresDateMs == t0 + 7 * minute, "access ended at the refund")
    }

    @Test func aReversedRefundGrantsTheTransactionAgainToItsUser() async throws {
        let ledger = try await subscribed()
        var renewals = Make.renewals("1000", count: 2)
        renewals[1].cancellationDateMs = t0 + 7 * minute
        #expect(try await ledger.notify(Make.notification("REFUND", otid: "1000", transactions: renewals, signed: t0 + 7 * minute), at: t0 + 7 * minute))
        #expect(try await ledger.entitlements("u-1", at: t0 + 8 * minute).first?.state == .revoked)
        let head = try await ledger.headSeq()
        let reversed = Make.renewals("1000", count: 2)
        #expect(try await ledger.notify(Make.notification("REFUND_REVERSED", otid: "1000", transactions: reversed, signed: t0 + 8 * minute), at: t0 + 8 * minute))
        let events = try await ledger.events(after: head)
        #expect(events.filter { $0.topic == "transaction.granted" }.map(\.userID) == ["u-1"])
        let entitlement = try #require(try await ledger.entitlements("u-1", at: t0 + 9 * minute).first)
        #expect(entitlement.state == .active)
        #expect(entitlement.expiresDateMs == t0 + 10 * minute)
        // The reversal delivered again under another id (Apple retries) grants nothing more.
        let quiet = try await ledger.headSeq()
        #expect(try await ledger.notify(Make.notification("REFUND_REVERSED", id: "again", otid: "1000", transactions: reversed, signed: t0 + 9 * minute), at: t0 + 9 * minute))
        #expect(try await ledger.events(after: quiet).filter { $0.topic == "transaction.granted" }.isEmpty)
    }

    @Test func aReversedRefundAfterATransferGoesToTheHolderNow() async throws {
        let ledger = try await subscribed()
        _ = try await ledger.record("u-2", Make.result(Make.renewals("1000", count: 2)), at: t0 + 2 * minute)
        #expect(try await ledger.owner("1000") == "u-2")
        var renewals = Make.renewals("1000", count: 2)
        renewals[1].cancellationDateMs = t0 + 7 * minute
        #expect(try await ledger.notify(Make.notification("REFUND", otid: "1000", transactions: renewals, signed: t0 + 7 * minute), at: t0 + 7 * minute))
        let head = try await ledger.headSeq()
        #expect(try await ledger.notify(Make.notification("REFUND_REVERSED", otid: "1000", transactions: Make.renewals("1000", count: 2), signed: t0 + 8 * minute), at: t0 + 8 * minute))
        let granted = try await ledger.events(after: head).filter { $0.topic == "transaction.granted" }
        #expect(granted.map(\.userID) == ["u-2"])
        #expect(try await ledger.entitlements("u-2", at: t0 + 9 * minute).first?.state == .active)
        #expect(try await ledger.entitlements("u-1", at: t0 + 9 * minute).isEmpty)
    }

    @Test func anExtendedRenewalDateMovesTheExpiry() async throws {
        let ledger = try await subscribed()
        var extended = Make.renewals("1000", count: 2)
        extended[1].expiresDateMs += 3 * 24 * 60 * minute
        #expect(try await ledger.notify(Make.notification("RENEWAL_EXTENDED", otid: "1000", transactions: [extended[1]], signed: t0 + 8 * minute), at: t0 + 8 * minute))
        #expect(try await ledger.subscription("1000")?.expiresDateMs == extended[1].expiresDateMs)
        let entitlement = try #require(try await ledger.entitlements("u-1", at: t0 + 60 * minute).first)
        #expect(entitlement.state == .active)
        // A receipt from before the extension does not take it back.
        _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 2)), at: t0 + 61 * minute)
        #expect(try await ledger.subscription("1000")?.expiresDateMs == extended[1].expiresDateMs)
    }

    @Test func revokeWithoutCancellationDatesRevokesThePurchase() async throws {
        let ledger = try await subscribed()
        #expect(try await ledger.notify(Make.notification("REVOKE", otid: "1000", signed: t0 + 3 * minute), at: t0 + 3 * minute))
        let revoked = try await ledger.events().filter { $0.topic == "transaction.revoked" }
        #expect(Set(revoked.map(\.transactionRevoked.transactionID)) == ["1000", "1000-1"])
        #expect(try await ledger.entitlements("u-1", at: t0 + 4 * minute).first?.state == .revoked)
    }

    @Test func priceIncreaseConsentIsRecorded() async throws {
        let ledger = try await subscribed()
        #expect(try await ledger.notify(Make.notification("PRICE_INCREASE_CONSENT", otid: "1000", pending: [Make.pending("1000", priceConsent: 1)], signed: t0 + 2 * minute), at: t0 + 2 * minute))
        #expect(try await ledger.subscription("1000")?.priceConsentStatus == 1)
        #expect(try await ledger.events().last?.subscriptionChanged.changed == ["price_consent"])
    }

    @Test func consumptionRequestIsStoredAndChangesNoState() async throws {
        let ledger = try await subscribed()
        let before = try await ledger.subscription("1000")
        let head = try await ledger.headSeq()
        #expect(try await ledger.notify(Make.notification("CONSUMPTION_REQUEST", otid: "1000", signed: t0 + 2 * minute), at: t0 + 2 * minute))
        #expect(try await ledger.headSeq() == head)
        #expect(try await ledger.subscription("1000")?.expiresDateMs == before?.expiresDateMs)
        #expect(try await ledger.subscription("1000")?.autoRenew == before?.autoRenew)
    }

    @Test(arguments: NotificationType.allCases.map(\.rawValue))
    func theSameNotificationAppliesOnce(_ type: String) async throws {
        let ledger = try await subscribed()
        let notification = Make.notification(
            type, id: "n-1", otid: "1000", transactions: Make.renewals("1000", count: 3), autoRenew: false,
            signed: t0 + 9 * minute)
        #expect(try await ledger.notify(notification, at: t0 + 9 * minute))
        let head = try await ledger.headSeq()
        let state = try await ledger.subscription("1000")
        #expect(try await ledger.notify(notification, at: t0 + 10 * minute) == false)
        #expect(try await ledger.headSeq() == head)
        #expect(try await ledger.subscription("1000") == state)
    }

    @Test func anOlderNotificationDoesNotUndoANewerOne() async throws {
        let ledger = try await subscribed()
        #expect(try await ledger.notify(Make.notification("DID_CHANGE_RENEWAL_STATUS", id: "late", otid: "1000", autoRenew: false, signed: t0 + 5 * minute), at: t0 + 5 * minute))
        #expect(try await ledger.notify(Make.notification("DID_CHANGE_RENEWAL_STATUS", id: "early", otid: "1000", autoRenew: true, signed: t0 + 3 * minute), at: t0 + 6 * minute))
        #expect(try await ledger.subscription("1000")?.autoRenew == false)
    }

    @Test(arguments: StoreKind.allCases) func aNotificationWithoutIdOrPurchaseIsRefused(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        await #expect(throws: LedgerFailure.self) {
            _ = try await ledger.notify(Make.notification("DID_RENEW", id: "", otid: "1000"), at: t0)
        }
        await #expect(throws: LedgerFailure.self) {
            _ = try await ledger.notify(Make.notification("DID_RENEW", id: "n", otid: ""), at: t0)
        }
    }
}
