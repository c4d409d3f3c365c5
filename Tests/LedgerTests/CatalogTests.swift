import Contracts
import Foundation
import StorekeeperCore
import Testing

@testable import Ledger

@Suite("STOREKEEPER_CATALOG: products, durations, access names")
struct CatalogTests {
    static let yaml = """
        products:
          com.example.pro.monthly: {type: auto_renewable, entitlements: [pro]}
          com.example.removeads:   {type: non_consumable, entitlements: [no_ads]}
          com.example.season.pass: {type: non_renewing, duration: P3M, entitlements: [season]}
          com.example.coins100:    {type: consumable}
        """

    @Test func theContractsExampleReadsAsYAMLAndAsJSON() throws {
        let catalog = try CatalogFile.parse(Self.yaml, path: "catalog.yaml")
        #expect(catalog["com.example.pro.monthly"] == .init(kind: .autoRenewable, access: ["pro"]))
        #expect(catalog["com.example.removeads"]?.kind == .nonConsumable)
        #expect(catalog["com.example.season.pass"]?.duration == ISODuration("P3M"))
        #expect(catalog["com.example.coins100"] == .init(kind: .consumable))
        let json = """
            {"products": {"com.example.removeads": {"type": "non_consumable", "entitlements": ["no_ads"]},
                          "com.example.season.pass": {"type": "non_renewing", "duration": "P1Y", "entitlements": ["season"]}}}
            """
        let fromJSON = try CatalogFile.parse(json, path: "catalog.json")
        #expect(fromJSON["com.example.removeads"] == .init(kind: .nonConsumable, access: ["no_ads"]))
        #expect(fromJSON["com.example.season.pass"]?.duration?.description == "P1Y")
    }

    @Test(arguments: [
        ("products:\n  a: {type: lifetime}\n", 2, "type must be"),
        ("products:\n  a: {type: consumable}\n  b: {type: non_renewing}\n", 3, "needs a duration"),
        ("products:\n  a: {type: non_renewing, duration: 3 months}\n", 2, "ISO 8601"),
        ("products:\n  a: {type: non_consumable, duration: P1M}\n", 2, "only a subscription has a duration"),
        ("products:\n  a: {type: non_renewing, duration: P1M, level: 1}\n", 2, "only an auto_renewable product has a group"),
        ("products:\n  a: {type: auto_renewable, level: 0}\n", 2, "level must be a whole number"),
        ("products:\n  a: {type: auto_renewable, level: top}\n", 2, "level must be a whole number"),
        ("products:\n  a: {type: consumable, entitlements: [pro]}\n", 2, "unlocks no entitlements"),
        ("products:\n  a: {type: non_consumable, price: 3}\n", 2, "unknown key 'price'"),
        ("items:\n  a: {type: consumable}\n", 1, "unknown key 'items'"),
        ("products:\n  a: {type: consumable\n  b: [\n", 3, "not valid YAML"),
        ("products:\n  a:\n    entitlements: [pro]\n", 3, "type is required"),
    ] as [(String, Int, String)])
    func aBadCatalogNamesTheVariableTheFileAndTheLine(_ text: String, _ line: Int, _ reason: String) {
        #expect {
            try CatalogFile.parse(text, path: "/etc/storekeeper/catalog.yaml")
        } throws: { error in
            let description = "\(error)"
            return description.hasPrefix("STOREKEEPER_CATALOG: /etc/storekeeper/catalog.yaml:\(line): ")
                && description.contains(reason)
        }
    }

    @Test func autoRenewablesMayNameTheirGroupLevelAndPeriodAndOneLevelIsACrossgrade() throws {
        let catalog = try CatalogFile.parse(
            """
            products:
              pro.monthly:  {type: auto_renewable, group: pro, level: 2, duration: P1M, entitlements: [pro]}
              pro.yearly:   {type: auto_renewable, group: pro, level: 2, duration: P1Y, entitlements: [pro]}
              premium.week: {type: auto_renewable, group: pro, level: 1, duration: P1W, entitlements: [pro, hd]}
              other.month:  {type: auto_renewable, group: other, level: 2}
              plain:        {type: auto_renewable}
            """, path: "catalog.yaml")
        #expect(catalog["pro.monthly"] == .init(kind: .autoRenewable, duration: ISODuration("P1M"), access: ["pro"], group: "pro", level: 2))
        #expect(catalog.sameLevel("pro.monthly", "pro.yearly"))
        #expect(!catalog.sameLevel("pro.monthly", "premium.week"))
        #expect(!catalog.sameLevel("pro.monthly", "other.month"), "another group")
        #expect(!catalog.sameLevel("plain", "plain"), "no level: unknown, never a crossgrade")
        #expect(!catalog.sameLevel("pro.monthly", "unknown"))
    }

    @Test func aMissingFileIsAConfigurationError() {
        #expect(throws: ConfigurationError.self) { try CatalogFile.load(path: "/nonexistent/catalog.yaml") }
    }

    @Test(arguments: [
        ("P1M", "2021-01-31T10:00:00Z", "2021-02-28T10:00:00Z"),
        ("P3M", "2020-11-30T00:00:00Z", "2021-02-28T00:00:00Z"),
        ("P1Y", "2020-02-29T12:00:00Z", "2021-02-28T12:00:00Z"),
        ("P1W", "2021-03-01T00:00:00Z", "2021-03-08T00:00:00Z"),
        ("P1DT12H", "2021-03-01T00:00:00Z", "2021-03-02T12:00:00Z"),
        ("PT90M", "2021-03-01T00:00:00Z", "2021-03-01T01:30:00Z"),
    ])
    func durationsAreCalendarArithmeticInUTC(_ duration: String, _ from: String, _ to: String) throws {
        let start = try #require(ISO8601DateFormatter().date(from: from))
        let end = try #require(ISO8601DateFormatter().date(from: to))
        let parsed = try #require(ISODuration(duration))
        #expect(parsed.added(to: Int64(start.timeIntervalSince1970 * 1_000)) == Int64(end.timeIntervalSince1970 * 1_000))
    }

    @Test(arguments: ["", "P", "1M", "PT", "P1", "P0D", "P1H", "PT1D", "P-1M", "P1.5M", "P1MT"])
    func notADuration(_ text: String) {
        #expect(ISODuration(text) == nil)
    }
}
