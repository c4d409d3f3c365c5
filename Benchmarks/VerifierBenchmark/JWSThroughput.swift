import AppleJWS
import Foundation
import Verifier

/// Signed transactions verified per second in one process, the chain cached
/// after the first: `SignedDataVerifier.verify` (ES256 over the JWS, the
/// chain looked up), and the verifier's whole StoreKit 2 path,
/// `SignedDataReader.transaction` (that, the claims decoded and checked, the
/// ledger's contract built). A JWS of the simulator's chain: the same curve
/// and the same work as Apple's. One task per core.
enum JWSThroughput {
    static func run(count: Int) async throws {
        let claims = """
            {"transactionId":"2000000000000001","originalTransactionId":"2000000000000001","bundleId":"com.example.storekeeper",\
            "productId":"com.example.pro.monthly","purchaseDate":1700000000000,"originalPurchaseDate":1700000000000,\
            "expiresDate":1700000300000,"quantity":1,"type":"Auto-Renewable Subscription","inAppOwnershipType":"PURCHASED",\
            "signedDate":1700000000000,"environment":"Sandbox","transactionReason":"PURCHASE"}
            """
        let jws = try SignedDataSigner.simulator().sign(Array(claims.utf8))
        let verifier = SignedDataVerifier(
            trustedRoots: try SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM]))
        let reader = SignedDataReader(verifier: verifier, bundleIDs: ["com.example.storekeeper"])
        _ = try await verifier.verify(jws)  // the chain, validated once and cached
        let tasks = max(1, ProcessInfo.processInfo.activeProcessorCount)
        print("JWS verifications, chain cached: \(count) on \(tasks) tasks")
        let verify = try await rate(count, tasks) { _ = try await verifier.verify(jws) }
        print("  SignedDataVerifier.verify:     \(String(format: "%.0f", verify)) /s")
        let read = try await rate(count, tasks) { _ = try await reader.transaction(jws, nowMs: 0) }
        print("  SignedDataReader.transaction:  \(String(format: "%.0f", read)) /s")
    }

    /// `count` calls of `body` spread over `tasks` tasks; calls per second.
    private static func rate(_ count: Int, _ tasks: Int, _ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for _ in stride(from: task, to: count, by: tasks) { try await body() }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - started
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
