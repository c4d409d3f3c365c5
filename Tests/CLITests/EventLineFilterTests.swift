import Contracts
import Foundation
import Testing

@testable import StorekeeperCLI

@Suite("storekeeper events tail: the contract's JSON")
struct EventLineFilterTests {
    static func object(_ event: LedgerEvent) throws -> [String: Any] {
        let line = try #require(try EventLineFilter(topicPrefix: nil, limit: nil).line(for: event))
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func environmentsAndStatesAreSpelledAsTheHTTPAPISpellsThem() throws {
        let changed = try Self.object(LedgerEvent.with {
            $0.seq = 12
            $0.topic = "subscription.changed"
            $0.occurredAtMs = 1_574_316_980_000
            $0.environment = .sandbox
            $0.subscriptionChanged = .with {
                $0.originalTransactionID = "1000"
                $0.entitlement = .with {
                    $0.environment = .production
                    $0.state = .billingRetry
                }
            }
        })
        #expect(changed["environment"] as? String == "Sandbox")
        #expect(changed["seq"] as? Int == 12)
        #expect(changed["occurred_at_ms"] as? Int64 == 1_574_316_980_000)
        let entitlement = (changed["subscription_changed"] as? [String: Any])?["entitlement"] as? [String: Any]
        #expect(entitlement?["environment"] as? String == "Production")
        #expect(entitlement?["state"] as? String == "billing_retry")
    }
}
