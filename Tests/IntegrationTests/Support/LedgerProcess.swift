import Contracts
import Foundation
import LedgerClient
import Logging
import ZeroMQ

/// `storekeeper-ledger` as a real process on free loopback ports, with a data
/// directory that outlives restarts (the crash test kills and restarts it),
/// plus in-process clients for its request and replay endpoints.
final class LedgerProcess: @unchecked Sendable {
    let dataDirectory: String
    let environment: [String: String]
    let ledgerEndpoint: String
    let replayEndpoint: String
    let eventsEndpoint: String
    private(set) var process: ChildProcess

    init(policy: String = "transfer", extraEnvironment: [String: String] = [:]) async throws {
        dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("storekeeper-ledger-\(UUID().uuidString)").path
        ledgerEndpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        replayEndpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        eventsEndpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        environment = [
            "STOREKEEPER_DATA_DIR": dataDirectory, "STOREKEEPER_BINDING_POLICY": policy,
            "STOREKEEPER_LEDGER_ENDPOINT": ledgerEndpoint, "STOREKEEPER_REPLAY_ENDPOINT": replayEndpoint,
            "STOREKEEPER_EVENTS_ENDPOINT": eventsEndpoint,
            "STOREKEEPER_REFRESH_ENDPOINT": "tcp://127.0.0.1:\(try freeLoopbackPort())",
            "STOREKEEPER_REFRESH_PER_MINUTE": "0", "STOREKEEPER_LOG_LEVEL": "info",
        ].merging(extraEnvironment) { $1 }
        process = try Self.start(environment)
        try await waitUntilStarted()
    }

    private static func start(_ environment: [String: String]) throws -> ChildProcess {
        try ChildProcess("storekeeper-ledger", environment: environment)
    }

    private func waitUntilStarted() async throws {
        guard await process.waitForOutput(containing: "started") else {
            await process.stop()
            throw LedgerNotStarted(output: process.captured)
        }
    }

    struct LedgerNotStarted: Error { let output: String }

    /// SIGKILL: no shutdown, no flush, mid-write.
    func kill() async {
        process.signal(SIGKILL)
        _ = await process.waitForExit()
    }

    /// Starts it again on the same ports and data.
    func restart() async throws {
        process = try Self.start(environment)
        try await waitUntilStarted()
    }

    /// Stops it and removes its data.
    @discardableResult
    func stop() async -> Int32? {
        let status = await process.stop()
        try? FileManager.default.removeItem(atPath: dataDirectory)
        return status
    }

    func client(_ context: ZMQContext) -> LedgerClient {
        LedgerClient(context: context, endpoint: ledgerEndpoint, logger: Logger(label: "test-ledger-client"))
    }

    func subscriber(_ context: ZMQContext) -> LedgerEventSubscriber {
        LedgerEventSubscriber(
            context: context, eventsEndpoint: eventsEndpoint, replayEndpoint: replayEndpoint,
            idleCheck: .milliseconds(200), logger: Logger(label: "test-subscriber"))
    }

    /// Every retained event, through the replay endpoint, oldest first.
    func replayAll(_ context: ZMQContext) async throws -> [LedgerEvent] {
        try await Self.replayAll(from: replayEndpoint, context)
    }

    /// Whether the ledger at `endpoint` answers a ping within `timeout`: long where an answer is
    /// expected (a loaded machine is slow to connect), short where none is.
    static func ping(_ endpoint: String, timeout: Duration = .seconds(1)) async -> Bool {
        let client = EnvelopeClient(context: ZMQContext(), endpoint: endpoint, logger: Logger(label: "test-ping"))
        let runner = Task { try await client.run() }
        defer { runner.cancel() }
        return await client.ping(timeout: timeout)
    }

    /// Every retained event of the ledger replaying at `endpoint`, oldest first.
    static func replayAll(from endpoint: String, _ context: ZMQContext) async throws -> [LedgerEvent] {
        let replay = EnvelopeClient(context: context, endpoint: endpoint, logger: Logger(label: "test-replay"))
        let runner = Task { try await replay.run() }
        defer { runner.cancel() }
        var events: [LedgerEvent] = []
        for _ in 0..<100_000 {
            let request = ReplayRequest.with { $0.afterSeq = events.last?.seq ?? 0 }
            let answer = try await replay.request(Envelope(requestID: "test-replay", body: .replayRequest(request)))
            guard case .replayBatch(let batch) = answer.body else { throw UnexpectedAnswer() }
            events += batch.events
            if !batch.more { return events }
        }
        throw UnexpectedAnswer()
    }

    struct UnexpectedAnswer: Error {}
}

/// A record request for one user with transactions of the given ids (one-off purchases).
func recordRequest(user: String, transactionIDs: [String], purchased: Int64 = 1_574_316_980_000) -> RecordRequest {
    RecordRequest.with {
        $0.userID = user
        $0.result = VerifyResult.with {
            $0.environment = .sandbox
            $0.style = .ios7
            $0.bundleID = "com.example.storekeeper"
            $0.transactions = transactionIDs.map { id in
                Transaction.with {
                    $0.transactionID = id
                    $0.originalTransactionID = id
                    $0.productID = "com.example.coins"
                    $0.quantity = 1
                    $0.purchaseDateMs = purchased
                }
            }
        }
    }
}

/// What a ledger last heard of a subscription that lapsed a minute before
/// `now` (ms): a previous period's transaction of `originalTransactionID`.
/// With a `receipt` (verifyReceipt's), auto-renew on and the receipt to ask
/// Apple with; without (StoreKit 2's JWS), no receipt and no renewal info.
func lapsedSubscription(user: String, originalTransactionID: String, now: Int64, receipt: String?) -> RecordRequest {
    RecordRequest.with {
        $0.userID = user
        $0.result = VerifyResult.with {
            $0.environment = .sandbox
            $0.style = receipt == nil ? .signedTransaction : .ios7
            $0.bundleID = "com.example.storekeeper"
            $0.transactions = [
                Transaction.with {
                    $0.transactionID = "\(originalTransactionID)-previous"
                    $0.originalTransactionID = originalTransactionID
                    $0.productID = "com.example.pro.monthly"
                    $0.quantity = 1
                    $0.purchaseDateMs = now - 6 * 60_000
                    $0.expiresDateMs = now - 60_000
                    if receipt == nil { $0.kind = .autoRenewable }
                }
            ]
            guard let receipt else { return }
            $0.latestReceipt = receipt
            $0.pendingRenewals = [
                PendingRenewal.with {
                    $0.originalTransactionID = originalTransactionID
                    $0.autoRenewStatus = true
                }
            ]
        }
    }
}
