import AppleJWS
import Contracts
import Foundation
import Testing

@testable import Ledger
@testable import Verifier

@Suite("Entitlements of every kind")
struct EntitlementKindTests {
    let t0 = Make.t0
    static let day: Int64 = 86_400_000
    static let catalog = try! CatalogFile.parse(CatalogTests.yaml, path: "catalog.yaml")

    static func oneOff(_ id: String, product: String, purchased: Int64, cancelled: Int64? = nil, kind: ProductKind? = nil)
        -> Transaction
    {
        var transaction = Make.transaction(id, product: product, purchased: purchased, cancelled: cancelled)
        if let kind { transaction.kind = kind }
        return transaction
    }

    @Test(arguments: StoreKind.allCases) func withACatalogNonConsumablesAndNonRenewingAreListedAndConsumablesAreNot(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, catalog: Self.catalog)
        let outcome = try await ledger.record(
            "u-1",
            Make.result([
                Self.oneOff("1", product: "com.example.removeads", purchased: t0),
                Self.oneOff("2", product: "com.example.season.pass", purchased: t0),
                Self.oneOff("3", product: "com.example.coins100", purchased: t0),
                Self.oneOff("4", product: "com.example.unknown.thing", purchased: t0),
            ] + Make.renewals("5", count: 1)),
            at: t0 + 1)
        #expect(outcome.granted.count == 5, "every transaction is credited, whatever its kind")
        let byProduct = Dictionary(uniqueKeysWithValues: outcome.entitlements.map { ($0.productID, $0) })
        #expect(Set(byProduct.keys) == ["com.example.removeads", "com.example.season.pass", "com.example.pro.monthly"])
        let removeAds = try #require(byProduct["com.example.removeads"])
        #expect(removeAds.kind == .nonConsumable)
        #expect(!removeAds.hasExpiresDateMs)
        #expect(removeAds.state == .active && removeAds.active)
        let season = try #require(byProduct["com.example.season.pass"])
        #expect(season.kind == .nonRenewing)
        #expect(season.expiresDateMs == ISODuration("P3M")!.added(to: t0))
        #expect(byProduct["com.example.pro.monthly"]?.kind == .autoRenewable)
        #expect(byProduct["com.example.pro.monthly"]?.autoRenewProductID == "")
        #expect(outcome.accessListed)
        #expect(outcome.access.map(\.name) == ["no_ads", "pro", "season"])
        #expect(outcome.access.first { $0.name == "no_ads" }?.hasExpiresDateMs == false)

        // A hundred days on, the season pass has expired and its access is gone.
        let rules = ledger.rules
        let at = t0 + 100 * Self.day
        let later = try await ledger.store.read { try rules.entitlements(of: "u-1", at: at, reader: $0) }
        #expect(later.entitlements.first { $0.productID == "com.example.season.pass" }?.state == .expired)
        #expect(later.access?.map(\.name) == ["no_ads"])
    }

    @Test(arguments: StoreKind.allCases) func aRefundedNonConsumableIsRevokedAndUnlocksNothing(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, catalog: Self.catalog)
        _ = try await ledger.record("u-1", Make.result([Self.oneOff("1", product: "com.example.removeads", purchased: t0)]), at: t0)
        let refunded = try await ledger.record(
            "u-1", Make.result([Self.oneOff("1", product: "com.example.removeads", purchased: t0, cancelled: t0 + 5)]),
            at: t0 + 10)
        #expect(refunded.entitlements.map(\.state) == [.revoked])
        #expect(refunded.entitlements.first?.active == false)
        #expect(refunded.access.isEmpty)
    }

    @Test(arguments: StoreKind.allCases) func storeKitsTypeListsAOneOffWithoutACatalogAndBeatsTheCatalog(_ store: StoreKind) async throws {
        let plain = try await LedgerFixture(store)
        let outcome = try await plain.record(
            "u-1", Make.result([Self.oneOff("1", product: "com.example.lifetime", purchased: t0, kind: .nonConsumable)]), at: t0)
        #expect(outcome.entitlements.map(\.kind) == [.nonConsumable])
        #expect(!outcome.accessListed, "no catalog, no access")

        // The catalog calls removeads a consumable by mistake; StoreKit 2 knows better.
        var catalog = Self.catalog
        catalog.products["com.example.removeads"] = .init(kind: .consumable)
        let ledger = try await LedgerFixture(store, catalog: catalog)
        let signed = try await ledger.record(
            "u-1", Make.result([Self.oneOff("9", product: "com.example.removeads", purchased: t0, kind: .nonConsumable)]), at: t0)
        #expect(signed.entitlements.map(\.kind) == [.nonConsumable])
    }

    @Test(arguments: StoreKind.allCases) func withoutACatalogAOneOffOfUnknownKindIsNotListed(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let outcome = try await ledger.record("u-1", Make.result([Self.oneOff("1", product: "com.example.removeads", purchased: t0)]), at: t0)
        #expect(outcome.granted.count == 1)
        #expect(outcome.entitlements.isEmpty)
    }

    @Test(arguments: StoreKind.allCases) func aRealStoreKit2NonConsumableCarriesItsType(_ store: StoreKind) async throws {
        var claims = NotificationV2Tests().transaction(0)
        claims["type"] = "Non-Consumable"
        claims["productId"] = "com.example.removeads"
        claims.removeValue(forKey: "expiresDate")
        let result = try await NotificationV2Tests.reader.transaction(try NotificationV2Tests.sign(claims), nowMs: t0)
        #expect(result.transactions.first?.kind == .nonConsumable)
        let ledger = try await LedgerFixture(store)
        let outcome = try await ledger.record("u-1", result, at: t0)
        #expect(outcome.entitlements.map(\.kind) == [.nonConsumable])
        let stored = try await ledger.store.read { try $0.transaction(TransactionKey(.sandbox, NotificationV2Tests.otid)) }
        #expect(stored?.kind == .nonConsumable)
    }

    @Test(arguments: StoreKind.allCases) func anAutoRenewableNamesTheProductItRenewsTo(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store, catalog: Self.catalog)
        var pending = Make.pending("5")
        pending.autoRenewProductID = "com.example.pro.yearly"
        let outcome = try await ledger.record("u-1", Make.result(Make.renewals("5", count: 1), pending: [pending]), at: t0 + 1)
        #expect(outcome.entitlements.first?.autoRenewProductID == "com.example.pro.yearly")
        #expect(outcome.access.first?.expiresDateMs == t0 + 5 * Make.minute)
    }
}
