import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The whole system as a person runs it: `storekeeper up --sim` starting
/// simulator, ledger, verifiers and gateway, driven with the `storekeeper`
/// CLI (sim, verify, events tail, entitlements) and plain HTTP.
@Suite("storekeeper up, end to end", .serialized)
struct StackUpTests {
    /// Secrets of this run: no log line of any service may hold them, nor a receipt.
    static let secret = "e2e-shared-secret-7f3a9c"
    static let apiKey = "sk-e2e-0123456789abcdef"

    @Test func buyVerifyRenewThreeTimesRefundAndWatchEveryEvent() async throws {
        let environment = [
            "STOREKEEPER_APPLE_SHARED_SECRET": Self.secret, "STOREKEEPER_API_KEYS": Self.apiKey,
            "STOREKEEPER_LOG_LEVEL": "debug",
        ]
        try await UpStack.run(environment: environment) { stack in
            let tail = try stack.startCLI("events", "tail")
            defer { tail.signal(SIGKILL) }
            let receiptFile = stack.dataDirectory + "-receipt.txt"
            defer { try? FileManager.default.removeItem(atPath: receiptFile) }

            let bought = await stack.cli(
                "sim", "buy", "--product", "com.example.pro.monthly", "--type", "auto_renewable", "--receipt-file",
                receiptFile, "--json")
            #expect(bought.status == 0, "\(bought.output)")
            let original = try #require(UpStack.json(bought.output)["original_transaction_id"] as? String)

            let verified = await stack.cli("verify", receiptFile, "--user", "u-e2e", "--json")
            #expect(verified.status == 0, "\(verified.output)")
            let granted = UpStack.json(verified.output)["granted"] as? [[String: Any]] ?? []
            #expect(granted.map { $0["transaction_id"] as? String } == [original])
            let again = await stack.cli("verify", receiptFile, "--user", "u-e2e", "--json")
            #expect(UpStack.json(again.output)["already_granted"] as? [String] == [original])

            for _ in 0..<3 {
                let renewed = await stack.cli("sim", "renew", original)
                #expect(UpStack.json(renewed.output)["renewals"] as? Int == 1, "\(renewed.output)")
            }
            // One grant for the purchase, then a grant and a renewal per renewal.
            var events = try await Self.waitForEvents(tail, count: 7)
            #expect(events.map(\.topic) == ["transaction.granted"] + Array(repeating: ["transaction.granted", "subscription.renewed"], count: 3).flatMap { $0 })
            // The gateway's log lines come through two pipes: wait (bounded) for the third.
            var notified = 0
            for _ in 0..<200 {
                notified = stack.up.captured.split(separator: "\n").filter {
                    $0.hasPrefix("gateway ") && $0.contains("notification stored") && $0.contains("notification.type=DID_RENEW")
                }.count
                if notified >= 3 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(notified == 3)

            let latest = try #require(events.last { $0.topic == "transaction.granted" }?.transactionID)
            let refunded = await stack.cli("sim", "refund", latest)
            #expect(refunded.status == 0, "\(refunded.output)")
            events = try await Self.waitForEvents(tail, count: 8)
            #expect(events.contains { $0.topic == "transaction.revoked" && $0.transactionID == latest })

            let entitlements = await stack.cli("entitlements", "u-e2e", "--json")
            let subscription = (UpStack.json(entitlements.output)["entitlements"] as? [[String: Any]])?.first
            #expect(subscription?["original_transaction_id"] as? String == original)
            #expect(subscription?["state"] as? String == "revoked")
            #expect(subscription?["active"] as? Bool == false)

            // Every event once, in order, all about this user.
            #expect(events.map(\.seq) == Array(1...UInt64(events.count)))
            #expect(events.allSatisfy { $0.userID == "u-e2e" })
            let human = await stack.cli("entitlements", "u-e2e")
            #expect(human.output.contains("com.example.pro.monthly  revoked"), "\(human.output)")

            let (metrics, _) = try await URLSession.shared.data(from: URL(string: stack.gateway + "/metrics")!)
            let exposition = String(decoding: metrics, as: UTF8.self)
            #expect(exposition.contains("hb_requests") && exposition.contains("/v1/receipts"), "\(exposition.prefix(2_000))")

            // The CLI used the key from STOREKEEPER_API_KEYS; without it the API refuses.
            let anonymous = try await HTTPAnswer.call("GET", stack.gateway + "/v1/users/u-e2e/entitlements")
            #expect(anonymous.status == 401)
            let receipt = try String(contentsOfFile: receiptFile, encoding: .utf8)
            let log = stack.up.captured
            #expect(log.contains("receipt recorded"), "the log must be the run's, at debug")
            for secret in [Self.secret, Self.apiKey, receipt, String(receipt.prefix(40))] {
                #expect(!log.contains(secret), "a log line holds a secret or a receipt")
            }
        }
    }

    @Test func aVerifierKilledUnderSteadyLoadIsRestartedAndClientsSeeOnlyRetryableErrors() async throws {
        try await UpStack.run { stack in
            // Apple takes 100-300 ms here, so requests are in flight when the verifier dies.
            let faults = await stack.cli("sim", "faults", "production", "--latency-min", "100", "--latency-max", "300")
            #expect(faults.status == 0, "\(faults.output)")
            var minted: [String] = []
            for index in 0..<120 {
                let purchase = try await HTTPAnswer.call(
                    "POST", stack.simulator + "/admin/purchases",
                    json: ["account": "load-\(index)", "product_id": "com.example.gems", "type": "consumable", "environment": "production"])
                minted.append(try #require(purchase.json["receipt_data"] as? String))
            }
            let receipts = minted
            let victim = try #require(stack.pid(of: "verifier-1"))
            let load = LoadRecord()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        while let index = load.take(below: receipts.count) {
                            let answer = try await HTTPAnswer.call(
                                "POST", stack.gateway + "/v1/receipts",
                                json: ["user_id": "user-\(client)", "receipt_data": receipts[index]])
                            load.record(index, LoadOutcome(answer))
                        }
                    }
                }
                group.addTask {
                    while load.answered < 20 { try await Task.sleep(for: .milliseconds(10)) }
                    kill(victim, SIGKILL)
                    load.markKill()
                }
                try await group.waitForAll()
            }
            let answers = load.answers
            #expect(answers.count == receipts.count)
            // The kill came with load still to go (with 8 clients, requests were in flight).
            #expect(load.answeredAtKill.map { $0 < receipts.count - 50 } == true)
            for (index, answer) in answers {
                #expect(answer.status == 200 || (answer.status == 503 && answer.retryable), "receipt \(index): \(answer.status) \(answer.body)")
            }
            // What was answered retryable is retried, as a client would; then every receipt is granted exactly once.
            var grants = answers.values.map(\.granted).reduce(0, +)
            for (index, answer) in answers where answer.status != 200 {
                for _ in 0..<10 {
                    let retry = try await HTTPAnswer.call(
                        "POST", stack.gateway + "/v1/receipts", json: ["user_id": "retry", "receipt_data": receipts[index]])
                    if retry.status == 200 {
                        grants += LoadOutcome(retry).granted
                        break
                    }
                    try await Task.sleep(for: .seconds(1))
                }
            }
            #expect(grants == receipts.count)

            // The supervisor noticed and started a new verifier-1.
            for _ in 0..<300 where stack.pid(of: "verifier-1") == victim {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(stack.pid(of: "verifier-1") != victim)
            #expect(stack.up.captured.contains("exited; restarting"))
            print("verifier kill under load: \(answers.count) requests, \(answers.values.filter { $0.status == 503 }.count) answered 503 (retryable)")
        }
    }

    /// Waits (bounded) until `events tail` has printed `count` events; them, parsed.
    static func waitForEvents(_ tail: ChildProcess, count: Int) async throws -> [TailedEvent] {
        for _ in 0..<600 {
            let events = tail.captured.split(separator: "\n").compactMap { TailedEvent(line: String($0)) }
            if events.count >= count { return events }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw EventsMissing(output: tail.captured)
    }

    struct EventsMissing: Error { let output: String }
}

/// One line of `storekeeper events tail`.
struct TailedEvent {
    let seq: UInt64
    let topic: String
    let userID: String
    let transactionID: String?

    init?(line: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let seq = (object["seq"] as? NSNumber)?.uint64Value, let topic = object["topic"] as? String
        else { return nil }
        self.seq = seq
        self.topic = topic
        self.userID = object["user_id"] as? String ?? ""
        let grant = (object["transaction_granted"] as? [String: Any])?["grant"] as? [String: Any]
        let revoked = object["transaction_revoked"] as? [String: Any]
        self.transactionID = (grant ?? revoked)?["transaction_id"] as? String
    }
}

/// What the load test keeps of one answer.
struct LoadOutcome: Sendable {
    let status: Int
    let retryable: Bool
    let granted: Int
    let body: String

    init(_ answer: HTTPAnswer) {
        status = answer.status
        retryable = (answer.json["error"] as? [String: Any])?["retryable"] as? Bool == true
        granted = (answer.json["granted"] as? [Any])?.count ?? 0
        body = "\(answer.json)"
    }
}

/// The shared state of the load clients: the next receipt to send and every answer.
final class LoadRecord: Sendable {
    private let state = Mutex((next: 0, answers: [Int: LoadOutcome](), answeredAtKill: Int?.none))

    func markKill() { state.withLock { $0.answeredAtKill = $0.answers.count } }
    var answeredAtKill: Int? { state.withLock { $0.answeredAtKill } }

    func take(below count: Int) -> Int? {
        state.withLock { state in
            guard state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    func record(_ index: Int, _ answer: LoadOutcome) { state.withLock { $0.answers[index] = answer } }
    var answered: Int { state.withLock { $0.answers.count } }
    var answers: [Int: LoadOutcome] { state.withLock { $0.answers } }
}
