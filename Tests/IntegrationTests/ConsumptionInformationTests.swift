import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A refund request answered with Send Consumption Information built from
/// the ledger's records, across real processes, as the simulator receives it.
@Suite("Consumption information across processes", .serialized)
struct ConsumptionInformationTests {
    @Test func aRefundRequestIsAnsweredWithWhatTheLedgerKnows() async throws {
        try await ServerAPIStack.run(ledgerEnvironment: [
            "STOREKEEPER_SEND_CONSUMPTION_INFO": "true", "STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS": "100",
            "STOREKEEPER_REFRESH_PER_MINUTE": "0", "STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS": "3600",
        ]) { stack in
            let token = UUID().uuidString.lowercased()
            let credited = try await stack.buy("com.example.gems", type: "consumable", account: "refunds", appAccountToken: token)
            let creditedID = try #require(credited["transaction_id"] as? String)
            #expect(try await stack.record(credited, for: "u-refunds").status == 200)
            let neverCredited = try await stack.buy("com.example.gems", type: "consumable", account: "refunds")
            let neverCreditedID = try #require(neverCredited["transaction_id"] as? String)

            for id in [creditedID, neverCreditedID] {
                try await stack.simulator.admin("/admin/consumption-requests", ["transaction_id": id])
            }
            let delivered = try await consumptionInformation(stack, creditedID)
            #expect(delivered["customerConsented"] as? Bool == true)
            #expect(delivered["deliveryStatus"] as? Int == 0, "credited: delivered")
            #expect(delivered["accountTenure"] as? Int == 1, "bound minutes ago: 0 to 3 days")
            #expect(delivered["appAccountToken"] as? String == token)
            #expect(delivered["sampleContentProvided"] as? Bool == false)
            for undeclared in ["consumptionStatus", "platform", "playTime", "lifetimeDollarsRefunded", "lifetimeDollarsPurchased", "userStatus"] {
                #expect(delivered[undeclared] as? Int == 0, "\(undeclared)")
            }
            let undelivered = try await consumptionInformation(stack, neverCreditedID)
            #expect(undelivered["deliveryStatus"] as? Int == 5, "never credited: not delivered")
            #expect(undelivered["accountTenure"] as? Int == 0, "nobody holds it: undeclared")
            #expect(undelivered["appAccountToken"] as? String == "")
        }
    }

    /// What the simulator received about `transactionID`, waited for (bounded): the ledger sends it after the notification.
    func consumptionInformation(_ stack: ServerAPIStack, _ transactionID: String) async throws -> [String: Any] {
        let url = URL(string: stack.simulator.base + "/admin/consumption/\(transactionID)")!
        for _ in 0..<600 {
            let (data, response) = try await URLSession.shared.data(from: url)
            if (response as? HTTPURLResponse)?.statusCode == 200 {
                return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NothingReceived(transactionID: transactionID)
    }

    struct NothingReceived: Error { let transactionID: String }
}
