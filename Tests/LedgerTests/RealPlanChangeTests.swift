import AppleJWS
import Contracts
import Foundation
import SeededRandom
import Testing

@testable import Ledger
@testable import Verifier

/// One real sandbox subscription's plan changes, every notification signed by
/// Apple (Fixtures/plan-changes, SOURCES.md): a 3-month plan, an upgrade to a
/// weekly one, auto-renew off, a downgrade queued, the downgrade cancelled,
/// auto-renew off again, the expiry. Verified with Apple's root as of the
/// session, applied by the ledger's rules.
@Suite("Plan changes from Apple's real notifications")
struct RealPlanChangeTests {
    static let otid = "2000001024993299"
    static let threeMonths = "com.getsession.org.pro_sub_3_months"
    static let weekly = "com.getsession.org.pro_sub"
    static let names = [
        "00-subscribed-resubscribe-3-months", "01-did-change-renewal-pref-upgrade-1-week",
        "02-did-change-renewal-status-auto-renew-disabled", "03-did-change-renewal-pref-downgrade-3-months",
        "04-did-change-renewal-pref-no-subtype", "05-did-change-renewal-status-auto-renew-disabled", "06-expired-voluntary",
    ]
    /// 2025-10-06, the session's day: the leaf is valid then (until 2027).
    static let reader = SignedDataReader(
        verifier: SignedDataVerifier(
            trustedRoots: try! SignedDataVerifier.appleRoots(), validationTime: { Date(timeIntervalSince1970: 1_759_727_800) }),
        bundleIDs: ["com.loki-project.loki-messenger"])

    static func notifications() async throws -> [NotificationApply] {
        var decoded: [NotificationApply] = []
        for name in names {
            let url = try #require(
                Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures/plan-changes"))
            let body = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            let payload = try #require(body?["signedPayload"] as? String)
            decoded.append(try await reader.notification(payload, receivedAtMs: 0))
        }
        return decoded
    }

    /// Each applied a second after Apple signed it, in Apple's order.
    @Test(arguments: StoreKind.allCases)
    func theUpgradeTakesEffectAtOnceAndTheDowngradeOnlyQueues(_ store: StoreKind) async throws {
        let catalog = ProductCatalog(products: [
            Self.threeMonths: .init(kind: .autoRenewable, access: ["pro"], group: "pro", level: 2),
            Self.weekly: .init(kind: .autoRenewable, access: ["pro", "pro_plus"], group: "pro", level: 1),
        ])
        let ledger = try await LedgerFixture(store, catalog: catalog)
        let n = try await Self.notifications()
        func apply(_ index: Int) async throws -> SubscriptionRecord {
            _ = try await ledger.notify(n[index], at: n[index].signedDateMs + 1_000)
            return try #require(try await ledger.subscription(Self.otid))
        }

        let subscribed = try await apply(0)
        #expect(subscribed.productID == Self.threeMonths)
        #expect(subscribed.expiresDateMs == 1_759_728_318_000)

        // The 3-month period ends at the upgrade; the weekly one starts at once.
        let seqBefore = try await ledger.headSeq()
        let upgraded = try await apply(1)
        #expect(upgraded.productID == Self.weekly)
        #expect(upgraded.expiresDateMs == 1_759_727_970_000)
        #expect(upgraded.autoRenewProductID == Self.weekly)
        let upgradeEvents = try await ledger.events(after: seqBefore).filter { $0.topic.hasPrefix("subscription.") }
        #expect(upgradeEvents.map(\.topic) == ["subscription.changed"], "one event, no renewal")
        let upgrade = try #require(upgradeEvents.first?.subscriptionChanged)
        #expect(upgrade.change == "upgrade")
        #expect((upgrade.fromProductID, upgrade.toProductID) == (Self.threeMonths, Self.weekly))
        #expect(upgrade.effectiveDateMs == 1_759_727_790_000)

        #expect(try await apply(2).autoRenew == false)

        // Queued: product and expiry stay; the renewal product and its access say where it goes.
        let queued = try await apply(3)
        #expect(queued.productID == Self.weekly && queued.expiresDateMs == 1_759_727_970_000)
        #expect(queued.autoRenewProductID == Self.threeMonths && queued.autoRenew == true)
        let downgrade = try #require(try await ledger.events().last?.subscriptionChanged)
        #expect(downgrade.change == "downgrade_queued")
        #expect((downgrade.fromProductID, downgrade.toProductID) == (Self.weekly, Self.threeMonths))
        #expect(downgrade.effectiveDateMs == 1_759_727_970_000)
        // No user presented this purchase: the event's entitlement shows what an app would get.
        let entitlement = downgrade.entitlement
        #expect(entitlement.autoRenewProductID == Self.threeMonths)
        #expect(entitlement.autoRenewAccess == ["pro"])

        let cancelled = try await apply(4)
        #expect(cancelled.autoRenewProductID == Self.weekly && cancelled.productID == Self.weekly)
        let cancel = try #require(try await ledger.events().last?.subscriptionChanged)
        #expect(cancel.change == "downgrade_cancelled")
        #expect((cancel.fromProductID, cancel.toProductID) == (Self.threeMonths, Self.weekly))

        _ = try await apply(5)
        let expired = try await apply(6)
        #expect(expired.productID == Self.weekly)
        #expect(expired.expiresDateMs == 1_759_727_970_000)
        #expect(expired.autoRenew == false && expired.expirationIntent == 1)
        #expect(EntitlementCalculator.state(expired, at: n[6].signedDateMs) == .expired)
        let changes = try await ledger.events().compactMap { $0.topic == "subscription.changed" ? $0.subscriptionChanged.change : nil }
        #expect(changes.filter { !$0.isEmpty } == ["upgrade", "downgrade_queued", "downgrade_cancelled"])
    }

    /// Whichever order the seven arrive in, Apple's times give the same end.
    @Test func anyArrivalOrderEndsWhereApplesOrderEnds() async throws {
        let n = try await Self.notifications()
        func final(_ order: [NotificationApply]) async throws -> [String] {
            let ledger = try await LedgerFixture()
            for (step, notification) in order.enumerated() {
                _ = try await ledger.notify(notification, at: 1_759_728_000_000 + Int64(step))
            }
            let s = try #require(try await ledger.subscription(Self.otid))
            return [
                s.productID, "\(s.expiresDateMs ?? 0)", "\(String(describing: s.autoRenew))", s.autoRenewProductID,
                "\(String(describing: s.expirationIntent))",
            ]
        }
        let expected = try await final(n)
        #expect(expected == [Self.weekly, "1759727970000", "Optional(false)", Self.weekly, "Optional(1)"])
        var generator = SplitMix64(seed: 0x0_9A_7E)
        for round in 0..<40 {
            let order = n.shuffled(using: &generator)
            let got = try await final(order)
            #expect(got == expected, "round \(round): \(order.map(\.notificationType))")
            if got != expected { break }
        }
        #expect(try await final(n.reversed()) == expected)
    }
}
