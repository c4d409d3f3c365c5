import Contracts
import Foundation
import PostgresTestServer
import Synchronization
import Testing
import ZeroMQ

/// Steady load through `storekeeper up --sim` while a driver SIGKILLs the
/// ledger, a verifier or the gateway every 1.5 s (the supervisor restarts
/// them). Then the ledger is checked against what clients saw: nothing
/// granted twice, every answered grant recorded, no gap in the events, and
/// clients only ever saw success, a retryable 503 or a refused connection
/// (the gateway itself down). Short in CI; STOREKEEPER_TEST_LONG=1 for the long form.
@Suite("Chaos: services killed under load", .serialized)
struct ChaosTests {
    static let long = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_LONG"] == "1"
    static let victims = ["verifier-1", "ledger", "gateway", "verifier-2"]

    @Test func killedServicesLoseAndDuplicateNothing() async throws {
        let kills = Self.long ? 40 : 6
        try await UpStack.run(environment: ["STOREKEEPER_VERIFY_DEADLINE_MS": "5000"]) { stack in
            try await Self.chaos(stack, victims: Self.victims, kills: kills)
        }
    }

    /// The scaled stack on PostgreSQL: 2 gateways, 3 verifiers and 2 ledgers, load through both
    /// gateways, while a ledger, a gateway and a verifier are SIGKILLed in turn and PostgreSQL restarts.
    @Test func theScaledStackOnPostgreSQLLosesAndDuplicatesNothing() async throws {
        let postgres = try await PostgresTestServer.shared()
        let url = try await postgres.newDatabase(prefix: "chaos")
        let kills = Self.long ? 30 : 6
        try await UpStack.run(
            verifiers: 3, environment: ["STOREKEEPER_VERIFY_DEADLINE_MS": "5000"],
            arguments: ["--ledgers", "2", "--gateways", "2", "--database-url", postgres.urlText(database: url.database)]
        ) { stack in
            try await Self.chaos(
                stack, victims: ["ledger-1", "gateway-1", "verifier-1", "ledger-2", "gateway-2", "verifier-3"],
                kills: kills,
                midway: {
                    // PostgreSQL restarts under load: 503s while it is down, then work resumes by itself.
                    await postgres.stop()
                    try await Task.sleep(for: .milliseconds(500))
                    try await postgres.start()
                })
        }
    }

    /// Six clients settle receipts through every gateway in turn while `kills` members
    /// (`victims` in turn) are SIGKILLed 1.5 s apart and `midway` runs halfway; then checks
    /// the ledger against what the clients saw.
    static func chaos(
        _ stack: UpStack, victims: [String], kills: Int, midway: @escaping @Sendable () async throws -> Void = {}
    ) async throws {
        _ = await stack.cli("sim", "faults", "production", "--latency-min", "20", "--latency-max", "80")
        var minted: [String] = []
        for index in 0..<(Self.long ? 20_000 : 1_500) {
            let purchase = try await HTTPAnswer.call(
                "POST", stack.simulator + "/admin/purchases",
                json: ["account": "chaos-\(index)", "product_id": "com.example.gems", "type": "consumable", "environment": "production"])
            minted.append(try #require(purchase.json["receipt_data"] as? String))
        }
        let receipts = minted
        let run = ChaosRecord()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<6 {
                group.addTask {
                    let gateway = stack.gateways[client % stack.gateways.count]
                    while !run.stopped, let index = run.take(below: receipts.count) {
                        try await Self.settle(receipts[index], index: index, user: "chaos-user-\(client)", gateway, run)
                    }
                }
            }
            group.addTask {
                defer { run.stop() }
                for round in 0..<kills {
                    try await Task.sleep(for: .milliseconds(1_500))
                    if round == kills / 2 { try await midway() }
                    let member = victims[round % victims.count]
                    guard let pid = stack.pid(of: member) else { continue }
                    kill(pid, SIGKILL)
                    run.killed()
                }
                try await Task.sleep(for: .milliseconds(1_000))
            }
            try await group.waitForAll()
        }

        // The ledger as it ended (it may have just restarted). On PostgreSQL the elected ledger serves
        // replay and numbers what was committed shortly after (after a takeover, within seconds): read
        // until every settled transaction is there, for 30 s at most; what is still missing then is lost.
        var events: [LedgerEvent] = []
        for _ in 0..<150 {
            if let all = try? await LedgerProcess.replayAll(from: stack.environment["STOREKEEPER_REPLAY_ENDPOINT"]!, ZMQContext()) {
                events = all
                let granted = Set(all.filter { $0.topic == "transaction.granted" }.map(\.transactionGranted.grant.transactionID))
                if granted.isSuperset(of: run.summary.settledTransactions) { break }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let recorded = events.filter { $0.topic == "transaction.granted" }.map(\.transactionGranted.grant.transactionID)
        let summary = run.summary
        var violations = summary.violations
        if Set(recorded).count != recorded.count { violations.append("the ledger granted a transaction twice") }
        let duplicates = Dictionary(grouping: summary.grantedByAnswers, by: { $0 }).filter { $0.value.count > 1 }
        if !duplicates.isEmpty { violations.append("answers granted \(duplicates.keys.sorted()) more than once") }
        let missing = Set(summary.settledTransactions).subtracting(recorded)
        if !missing.isEmpty { violations.append("settled but not in the ledger: \(missing.sorted().prefix(5))") }
        if events.isEmpty || events.map(\.seq) != Array(1...UInt64(events.count)) {
            violations.append("the event sequence is empty or has a gap")
        }
        print(
            "chaos: \(summary.requests) requests, \(summary.settledTransactions.count) receipts settled, \(summary.kills) kills, "
                + "\(summary.retries) retries, \(stack.restarts) restarts, violations: \(violations.count)")
        #expect(summary.kills == kills)
        #expect(summary.settledTransactions.count > 100, "too little load got through to mean anything")
        #expect(violations.isEmpty, "\(violations)")
    }

    /// Posts one receipt until it is settled (200), as a careful client would:
    /// a retryable 503 or a refused connection is tried again; anything else is a violation.
    static func settle(_ receipt: String, index: Int, user: String, _ gateway: String, _ run: ChaosRecord) async throws {
        for _ in 0..<400 {
            let answer: HTTPAnswer
            do {
                answer = try await HTTPAnswer.call("POST", gateway + "/v1/receipts", json: ["user_id": user, "receipt_data": receipt])
            } catch {
                run.retried()  // the gateway is down (killed): connection refused or reset
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            let granted = (answer.json["granted"] as? [[String: Any]] ?? []).compactMap { $0["transaction_id"] as? String }
            switch answer.status {
            case 200:
                let already = answer.json["already_granted"] as? [String] ?? []
                run.settled(granted: granted, transaction: (granted + already).first)
                return
            case 503 where (answer.json["error"] as? [String: Any])?["retryable"] as? Bool == true:
                run.retried()
                try await Task.sleep(for: .milliseconds(100))
            default:
                run.violation("receipt \(index): \(answer.status) \(answer.json)")
                return
            }
        }
        run.violation("receipt \(index) never settled")
    }
}

/// What the chaos run's clients and driver saw.
final class ChaosRecord: Sendable {
    struct Summary {
        var next = 0
        var stopped = false
        var requests = 0
        var retries = 0
        var kills = 0
        var grantedByAnswers: [String] = []
        var settledTransactions: [String] = []
        var violations: [String] = []
    }

    private let state = Mutex(Summary())

    var summary: Summary { state.withLock { $0 } }
    var stopped: Bool { state.withLock { $0.stopped } }
    func stop() { state.withLock { $0.stopped = true } }
    func killed() { state.withLock { $0.kills += 1 } }
    func retried() { state.withLock { $0.requests += 1; $0.retries += 1 } }
    func violation(_ text: String) { state.withLock { $0.requests += 1; $0.violations.append(text) } }

    func take(below count: Int) -> Int? {
        state.withLock { state in
            guard state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    func settled(granted: [String], transaction: String?) {
        state.withLock { state in
            state.requests += 1
            state.grantedByAnswers += granted
            if let transaction { state.settledTransactions.append(transaction) } else {
                state.violations.append("a settled answer names no transaction")
            }
        }
    }
}
