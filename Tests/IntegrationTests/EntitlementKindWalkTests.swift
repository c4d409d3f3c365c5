import Foundation
import Testing

/// Entitlements of every kind through `storekeeper up --sim` with a catalog:
/// a non-consumable from a receipt, a non-renewing subscription from a
/// StoreKit 2 signed transaction, a consumable that is never an entitlement,
/// and the access names they unlock.
@Suite("Entitlements of every kind end to end", .serialized)
struct EntitlementKindWalkTests {
    static let catalog = """
        products:
          com.example.pro.monthly: {type: auto_renewable, entitlements: [pro]}
          com.example.removeads:   {type: non_consumable, entitlements: [no_ads]}
          com.example.season.pass: {type: non_renewing, duration: P3M, entitlements: [season]}
          com.example.coins100:    {type: consumable}
        """

    @Test func aNonConsumableANonRenewingPassAndAConsumableWithACatalog() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).yaml")
        try Self.catalog.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await UpStack.run(environment: ["STOREKEEPER_CATALOG": file.path]) { stack in
            let gateway = stack.gateway
            func buy(_ product: String, _ type: String) async throws -> [String: Any] {
                try await HTTPAnswer.call(
                    "POST", stack.simulator + "/admin/purchases",
                    json: ["account": "kinds", "product_id": product, "type": type, "environment": "sandbox"]
                ).json
            }
            _ = try await buy("com.example.coins100", "consumable")
            let removeAds = try await buy("com.example.removeads", "non_consumable")
            let receipt = try #require(removeAds["receipt_data"] as? String)
            let recorded = try await HTTPAnswer.call(
                "POST", gateway + "/v1/receipts", json: ["user_id": "kinds-user", "receipt_data": receipt])
            #expect(recorded.status == 200)
            let kinds = (recorded.json["entitlements"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
            #expect(kinds == ["non_consumable"], "the consumable is credited but is no entitlement")
            #expect((recorded.json["access"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["no_ads"])

            // The season pass through StoreKit 2: its type comes signed.
            let pass = try await buy("com.example.season.pass", "non_renewing")
            let signed = try #require(pass["signed_transaction"] as? String)
            let viaJWS = try await HTTPAnswer.call(
                "POST", gateway + "/v1/transactions", json: ["user_id": "kinds-user", "signed_transaction": signed])
            #expect(viaJWS.status == 200)

            let read = try await HTTPAnswer.call("GET", gateway + "/v1/users/kinds-user/entitlements")
            let entitlements = try #require(read.json["entitlements"] as? [[String: Any]])
            let season = try #require(entitlements.first { $0["product_id"] as? String == "com.example.season.pass" })
            #expect(season["kind"] as? String == "non_renewing")
            #expect(season["state"] as? String == "active")
            #expect((season["expires_date_ms"] as? Int64 ?? 0) > Int64(Date().timeIntervalSince1970 * 1_000) + 80 * 86_400_000)
            #expect((read.json["access"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["no_ads", "season"])

            // Every credit, the consumable's included, newest first.
            let listed = try await HTTPAnswer.call("GET", gateway + "/v1/users/kinds-user/transactions")
            let products = (listed.json["transactions"] as? [[String: Any]])?.compactMap { $0["product_id"] as? String }
            #expect(products?.first == "com.example.season.pass")
            #expect(Set(products ?? []) == ["com.example.season.pass", "com.example.removeads", "com.example.coins100"])
        }
    }

    @Test func aBadCatalogStopsTheLedgerNamingTheLine() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).yaml")
        try "products:\n  com.example.pass: {type: non_renewing}\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess("storekeeper-ledger", environment: ["STOREKEEPER_CATALOG": file.path])
        let status = await child.waitForOwnExit()
        #expect(status == 78)
        #expect(child.captured.contains("STOREKEEPER_CATALOG: \(file.path):2: "))
    }
}
