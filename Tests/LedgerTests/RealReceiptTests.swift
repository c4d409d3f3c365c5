import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Ledger

/// Real verifyReceipt answers (Tests/AppleFormatsTests/Fixtures, copied from
/// ../shared/fixtures/apple), normalized as the verifier does, recorded by the ledger.
@Suite("Real Apple receipts through the ledger")
struct RealReceiptTests {
    static func result(_ name: String, environment: AppleEnvironment = .sandbox) throws -> VerifyResult {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AppleFormatsTests/Fixtures/verifyreceipt/\(name)")
        let response = try AppleResponse(body: Array(try Data(contentsOf: url)))
        return ReceiptNormalizer.normalize(response, environment: environment, receiptSHA256: "test")
    }

    static func maxExpiry(_ name: String) throws -> Int64 {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AppleFormatsTests/Fixtures/verifyreceipt/\(name)")
        let body = try JSONSerialization.jsonObject(with: try Data(contentsOf: url)) as? [String: Any]
        let infos = body?["latest_receipt_info"] as? [[String: Any]] ?? []
        return infos.compactMap { info -> Int64? in
            if let text = info["expires_date_ms"] as? String { return Int64(text) }
            return (info["expires_date_ms"] as? NSNumber)?.int64Value
        }.max() ?? 0
    }

    @Test(arguments: [
        "status0-sandbox-5min-renewals-no-otid-in-pending.json", "status0-ios7-numbers-as-ints.json",
        "status0-ios7-autorenew-42-inapp-anonymized.json", "status0-sandbox-upgrade-pair-revenuecat.json",
    ])
    func aRealReceiptIsGrantedOnceAndItsExpiryIsTheGreatest(_ name: String) async throws {
        let ledger = try await LedgerFixture()
        let result = try Self.result(name)
        let first = try await ledger.record("u-1", result, at: Make.t0)
        let live = result.transactions.filter { !$0.hasCancellationDateMs || $0.isUpgraded }
        #expect(first.granted.count == live.count)
        #expect(Set(first.granted.map(\.transactionID)).count == first.granted.count)
        let expected = try Self.maxExpiry(name)
        if expected > 0 {
            #expect(first.entitlements.map(\.expiresDateMs).max() == expected)
        }
        let replay = try await ledger.record("u-2", result, at: Make.t0)
        #expect(replay.granted.isEmpty)
        #expect(replay.alreadyGranted.count == live.count)
    }
}
