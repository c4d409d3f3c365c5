import Foundation
import Synchronization
import Testing

/// Mixed load for a while (60 s in CI; 10 minutes with STOREKEEPER_TEST_LONG=1):
/// new receipts, replays, entitlement reads and renewal notifications. The
/// resident memory and open descriptors of every Storekeeper process must
/// stay flat: what they are after the first quarter (warmed up) is what they
/// are at the end, within a margin.
@Suite("Soak: flat memory and descriptors under mixed load", .serialized)
struct SoakTests {
    static let duration: Duration = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_LONG"] == "1" ? .seconds(600) : .seconds(60)
    static let members = ["ledger", "verifier-1", "verifier-2", "gateway"]

    @Test func memoryAndDescriptorsStayFlat() async throws {
        try await UpStack.run { stack in
            let pids = Self.members.compactMap { stack.pid(of: $0) }
            try #require(pids.count == Self.members.count)
            let requests = SharedTally()
            let started = ContinuousClock.now
            var warm: [Footprint] = []
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<4 {
                    group.addTask { try await Self.mixedLoad(client: client, until: started + Self.duration, stack, requests) }
                }
                try await Task.sleep(until: started + Self.duration / 4)
                warm = pids.map(Footprint.init)
                try await group.waitForAll()
            }
            let end = pids.map(Footprint.init)
            for (index, member) in Self.members.enumerated() {
                print("soak \(member): RSS \(warm[index].kib) → \(end[index].kib) KiB, fds \(warm[index].fds) → \(end[index].fds)")
                #expect(end[index].kib <= warm[index].kib + warm[index].kib / 4 + 16_384, "\(member) memory grew")
                #expect(end[index].fds <= warm[index].fds + 16, "\(member) leaks descriptors")
            }
            print("soak: \(requests.value) requests in \(Self.duration)")
            #expect(requests.value > 100)
        }
    }

    /// One client: buys (a consumable or a subscription), verifies, replays now and then,
    /// reads entitlements, renews subscriptions (the simulator notifies the gateway).
    static func mixedLoad(client: Int, until end: ContinuousClock.Instant, _ stack: UpStack, _ requests: SharedTally) async throws {
        var round = 0
        var last: String?
        while ContinuousClock.now < end {
            round += 1
            let subscription = round % 5 == 0
            let bought = try await HTTPAnswer.call(
                "POST", stack.simulator + "/admin/purchases",
                json: [
                    "account": "soak-\(client)-\(round)", "product_id": subscription ? "com.example.pro.monthly" : "com.example.gems",
                    "type": subscription ? "auto_renewable" : "consumable", "environment": "production",
                ])
            guard let receipt = bought.json["receipt_data"] as? String else { continue }
            let user = "soak-user-\(client)-\(round % 20)"
            let verified = try await HTTPAnswer.call("POST", stack.gateway + "/v1/receipts", json: ["user_id": user, "receipt_data": receipt])
            #expect(verified.status == 200, "\(verified.json)")
            if let last, round % 3 == 0 {
                _ = try await HTTPAnswer.call("POST", stack.gateway + "/v1/receipts", json: ["user_id": user, "receipt_data": last])
            }
            _ = try await HTTPAnswer.call("GET", stack.gateway + "/v1/users/\(user)/entitlements")
            if subscription, let original = bought.json["original_transaction_id"] as? String {
                _ = try await HTTPAnswer.call("POST", stack.simulator + "/admin/renew", json: ["original_transaction_id": original])
            }
            last = receipt
            requests.add(3)
        }
    }
}

/// A process's resident memory and open descriptors now.
struct Footprint {
    let kib: Int
    let fds: Int

    init(_ pid: pid_t) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        kib = line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}

/// A count shared by concurrent tasks.
final class SharedTally: Sendable {
    private let count = Mutex(0)
    func add(_ amount: Int) { count.withLock { $0 += amount } }
    var value: Int { count.withLock { $0 } }
}
