import Contracts
import Testing

@testable import Ledger

/// Refresh through the App Store Server API: which lapsed subscriptions are
/// claimed with and without it (both stores), a status answer applied as a
/// refresh, and what the ledger believes about the verifiers' key (pure).
@Suite("Refresh through the App Store Server API")
struct ServerAPIRefreshRuleTests {
    let t0 = Make.t0
    let minute = Make.minute

    /// A subscription the ledger knows only from a StoreKit 2 JWS: no receipt, no renewal info.
    func signedOnly(_ otid: String) -> VerifyResult {
        var result = Make.result(Make.renewals(otid, count: 1), latestReceipt: "")
        result.style = .signedTransaction
        return result
    }

    func claimed(_ ledger: LedgerFixture, withoutReceipt: Bool, at now: Int64) async throws -> [String] {
        guard case .claimed(let due) = try await ledger.apply(.claimRefreshes(limit: 10, withoutReceipt: withoutReceipt), at: now)
        else { throw LedgerFixture.Unexpected() }
        return due.map(\.subscription.key.originalTransactionID)
    }

    @Test(arguments: StoreKind.allCases) func subscriptionsWithoutAReceiptAreClaimedOnlyWhenTheServerAPIIsThere(_ store: StoreKind) async throws {
        for withoutReceipt in [false, true] {
            let ledger = try await LedgerFixture(store)
            // verifyReceipt's: a receipt and auto-renew on.
            _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 1), pending: [Make.pending("1000")]), at: t0)
            // StoreKit 2's, with no renewal info ever stated.
            _ = try await ledger.record("u-2", signedOnly("2000"), at: t0)
            // StoreKit 2's with renewal info from a version 2 notification: auto-renew on.
            _ = try await ledger.record("u-3", signedOnly("3000"), at: t0)
            var renewal = Make.notification("DID_CHANGE_RENEWAL_STATUS", otid: "3000", pending: [Make.pending("3000")], signed: t0)
            renewal.latestReceipt = ""
            _ = try await ledger.notify(renewal, at: t0)
            // StoreKit 2's with auto-renew off: never refreshed.
            _ = try await ledger.record("u-4", signedOnly("4000"), at: t0)
            var off = Make.notification("DID_CHANGE_RENEWAL_STATUS", otid: "4000", pending: [Make.pending("4000", autoRenew: false)], signed: t0)
            off.latestReceipt = ""
            _ = try await ledger.notify(off, at: t0)

            let due = try await claimed(ledger, withoutReceipt: withoutReceipt, at: t0 + 7 * minute)
            // All expired at once: in the sweeps' order, then by id.
            #expect(due == (withoutReceipt ? ["1000", "2000", "3000"] : ["1000"]))
        }
    }

    @Test(arguments: StoreKind.allCases) func aStatusAnswerRenewsAndStatesRenewalInfoAndKeepsTheReceipt(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await ledger.record("u-1", Make.result(Make.renewals("1000", count: 1), pending: [Make.pending("1000")]), at: t0)
        let head = try await ledger.headSeq()
        // Get All Subscription Statuses: the latest transaction and the renewal info, signed, no receipt.
        var status = Make.result(
            [Make.renewals("1000", count: 3)[2]], pending: [Make.pending("1000", autoRenew: false)],
            requestDate: t0 + 11 * minute, latestReceipt: "")
        status.style = .signedTransaction
        _ = try await ledger.apply(.refreshResult(status, owner: "u-1"), at: t0 + 11 * minute)
        #expect(try await ledger.topics(after: head) == ["transaction.granted", "subscription.renewed", "subscription.changed"])
        let subscription = try #require(try await ledger.subscription("1000"))
        #expect(subscription.expiresDateMs == t0 + 15 * minute)
        #expect(subscription.autoRenew == false)
        #expect(subscription.latestReceipt == "bGF0ZXN0", "a status answer has no receipt: the stored one stays")
    }

    @Test func whatTheVerifiersSaidAboutTheirKeyDecidesWhetherToAsk() {
        var availability = ServerAPIAvailability()
        #expect(availability.shouldAsk(at: 0), "unknown: try")
        availability.unconfigured(at: 1_000)
        #expect(!availability.shouldAsk(at: 1_000 + ServerAPIAvailability.recheckAfterMs - 1))
        #expect(availability.shouldAsk(at: 1_000 + ServerAPIAvailability.recheckAfterMs), "a verifier may have a key now")
        availability.answered()
        #expect(availability.known == .available)
        #expect(availability.shouldAsk(at: 2_000))
    }
}
