// Receipts for the benchmark, minted in the simulator, and the request
// bodies built from them ahead of time (the clock runs only while sending).
import BenchmarkSupport
import Foundation
import NIOCore

enum Workload {
    /// `count` distinct receipts, each of its own Apple account: mostly
    /// production consumables, every tenth a sandbox subscription (production
    /// answers 21007 first, as for App Review and TestFlight).
    static func mint(_ count: Int, prefix: String, simulator: HTTPLoadClient) async throws -> [String] {
        let receipts = ReceiptList(count: count)
        try await ClosedLoop.run(count: count, concurrency: 64) { index in
            let subscription = index % 10 == 9
            let body: [String: Any] = [
                "account": "\(prefix)-\(index)",
                "product_id": subscription ? "com.example.pro.monthly" : "com.example.gems",
                "type": subscription ? "auto_renewable" : "consumable",
                "environment": subscription ? "sandbox" : "production",
            ]
            let answer = try await simulator.send(.POST, "/admin/purchases", json: try json(body))
            let object = try JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView)) as? [String: Any]
            receipts.set(index, object?["receipt_data"] as? String ?? "")
            return "200"
        }
        return receipts.all
    }

    /// POST /v1/receipts bodies: receipt `i` for user `u-(i mod 5000)`; every
    /// twentieth request replays an earlier receipt (it must grant nothing new).
    static func receiptBodies(_ receipts: [String]) throws -> [ByteBuffer] {
        try receipts.indices.map { index in
            let receipt = index % 20 == 19 && index > 100 ? receipts[index - 100] : receipts[index]
            return try json(["user_id": "u-\(index % 5_000)", "receipt_data": receipt])
        }
    }

    static func json(_ object: [String: Any]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object))
    }
}

/// Filled by concurrent minting tasks.
final class ReceiptList: @unchecked Sendable {
    private let lock = NSLock()
    private var receipts: [String]

    init(count: Int) { receipts = Array(repeating: "", count: count) }

    func set(_ index: Int, _ receipt: String) { lock.withLock { receipts[index] = receipt } }
    var all: [String] { lock.withLock { receipts } }
}
