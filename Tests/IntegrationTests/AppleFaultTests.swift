import Contracts
import Foundation
import Testing
import ZeroMQ

/// Apple's bad days, played by the simulator, through `storekeeper up --sim`
/// with a 4 s deadline: each fault ends in its error class within the
/// deadline, and nothing is recorded.
@Suite("Apple faults end in the right error, in time, recording nothing", .serialized)
struct AppleFaultTests {
    static let deadline: Duration = .seconds(4)

    /// The fault's `storekeeper sim faults` flag, and the answer it must end in.
    static let cases: [(flag: String, status: Int, code: String)] = [
        ("--rate-21005", 503, "apple_unavailable"), ("--rate-21199", 503, "apple_unavailable"),
        ("--rate-503", 503, "apple_unavailable"), ("--rate-hang", 503, "apple_unavailable"),
        ("--rate-garbage", 503, "apple_unavailable"), ("--rate-truncated", 503, "apple_unavailable"),
        ("--rate-huge", 503, "apple_unavailable"), ("--rate-wrong-bundle", 422, "bundle_mismatch"),
    ]

    @Test func everyFaultEndsInItsErrorWithinTheDeadline() async throws {
        let environment = [
            "STOREKEEPER_VERIFY_DEADLINE_MS": "\(Self.deadline.components.seconds * 1_000)",
            "STOREKEEPER_APPLE_ATTEMPT_TIMEOUT_MS": "1000", "STOREKEEPER_APPLE_CONNECT_TIMEOUT_MS": "500",
        ]
        try await UpStack.run(environment: environment) { stack in
            let verifiers = ["verifier-1", "verifier-2"].map { stack.pid(of: $0) }
            for (index, fault) in Self.cases.enumerated() {
                let set = await stack.cli("sim", "faults", "production", fault.flag, "1")
                #expect(set.status == 0, "\(set.output)")
                let bought = try await HTTPAnswer.call(
                    "POST", stack.simulator + "/admin/purchases",
                    json: ["account": "fault-\(index)", "product_id": "com.example.gems", "type": "consumable", "environment": "production"])
                let receipt = try #require(bought.json["receipt_data"] as? String)
                let started = ContinuousClock.now
                let answer = try await HTTPAnswer.call(
                    "POST", stack.gateway + "/v1/receipts", json: ["user_id": "fault-user", "receipt_data": receipt])
                let elapsed = ContinuousClock.now - started
                let error = answer.json["error"] as? [String: Any]
                #expect(answer.status == fault.status && error?["code"] as? String == fault.code, "\(fault.flag): \(answer.status) \(answer.json)")
                #expect(error?["retryable"] as? Bool == (fault.status == 503), "\(fault.flag)")
                // The deadline bounds the answer; the margin is for a loaded 2-core machine.
                #expect(elapsed < Self.deadline + .seconds(3), "\(fault.flag) took \(elapsed)")
            }
            _ = await stack.cli("sim", "faults", "production")
            let events = try await LedgerProcess.replayAll(from: stack.environment["STOREKEEPER_REPLAY_ENDPOINT"]!, ZMQContext())
            #expect(events.isEmpty, "a fault recorded something: \(events.map(\.topic))")
            let entitlements = try await HTTPAnswer.call("GET", stack.gateway + "/v1/users/fault-user/entitlements")
            #expect((entitlements.json["entitlements"] as? [Any])?.isEmpty == true)
            // No verifier died on any of it (the 50 MiB answer included).
            #expect(["verifier-1", "verifier-2"].map { stack.pid(of: $0) } == verifiers)
        }
    }
}
