import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `storekeeper-sim` as a real process on a free loopback port, with its admin API.
final class SimulatorProcess: Sendable {
    let process: ChildProcess
    let base: String
    static let secret = "sim-shared-secret-0123456789"

    init(extraEnvironment: [String: String] = [:]) async throws {
        let port = try freeLoopbackPort()
        base = "http://127.0.0.1:\(port)"
        process = try ChildProcess(
            "storekeeper-sim",
            environment: [
                "STOREKEEPER_SIM_ADDR": "127.0.0.1:\(port)", "STOREKEEPER_APPLE_SHARED_SECRET": Self.secret,
                "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
            ].merging(extraEnvironment) { $1 })
        for _ in 0..<300 {
            if (try? await get("/healthz")) == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        await process.stop()
        throw SimulatorNotReady(output: process.captured)
    }

    struct SimulatorNotReady: Error { let output: String }
    struct AdminCallFailed: Error { let path: String, body: String }

    var productionURL: String { base + "/production/verifyReceipt" }
    var sandboxURL: String { base + "/sandbox/verifyReceipt" }

    @discardableResult
    func stop() async -> Int32? { await process.stop() }

    private func get(_ path: String) async throws -> Int {
        let (_, response) = try await URLSession.shared.data(from: URL(string: base + path)!)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// POSTs JSON to an admin endpoint; the decoded answer.
    @discardableResult
    func admin(_ path: String, _ body: [String: Any]) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw AdminCallFailed(path: path, body: String(decoding: data, as: UTF8.self))
        }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// Mints a purchase; returns its receipt and transaction id.
    func purchase(
        product: String, type: String, environment: String, account: String = "buyer"
    ) async throws -> (receipt: String, transactionID: String) {
        let answer = try await admin(
            "/admin/purchases",
            ["account": account, "product_id": product, "type": type, "environment": environment])
        return (answer["receipt_data"] as? String ?? "", answer["transaction_id"] as? String ?? "")
    }

    /// `count` production consumable receipts, each of its own Apple account.
    func consumableReceipts(_ count: Int) async throws -> [String] {
        var receipts: [String] = []
        for index in 0..<count {
            receipts.append(try await purchase(
                product: "com.example.gems", type: "consumable", environment: "production", account: "buyer-\(index)").receipt)
        }
        return receipts
    }

    func setFaults(_ environment: String, _ plan: [String: Any]) async throws {
        try await admin("/admin/faults/\(environment)", plan)
    }
}
