import Contracts
import LedgerClient
import Logging
import Metrics
import ServiceLifecycle
import ZeroMQ

/// The verifier's side of `LedgerHandoff`: a DEALER connected to the ledgers
/// (`STOREKEEPER_LEDGER_ENDPOINT`). A receipt's verified result goes from
/// here straight to a ledger as a `RecordRequest`, and that ledger answers the
/// gateway, which then never carries the result to the ledger itself: one
/// ZeroMQ hop and its thread wake-ups fewer on every receipt's path
/// (bench/README, "fewer hops").
///
/// It never waits and never queues: with no ledger connected, or libzmq's
/// queue full, the answer goes back through the pool as before, and the
/// gateway records it. Only ledgers connected now take messages
/// (`ZMQ_IMMEDIATE`), so a ledger that is down holds no result.
final class LedgerHandoffSender: Service, Sendable {
    private let socket: ZMQSocketLoop
    /// `STOREKEEPER_LEDGER_ENDPOINT`, which a gateway's request must name too.
    private let ledgers: Set<String>
    private let handedOver: Counter
    private let answeredInstead: Counter

    init(
        context: ZMQContext, endpoints: [String], metricsFactory: any MetricsFactory = MetricsSystem.factory,
        logger: Logger
    ) {
        ledgers = Set(endpoints)
        socket = ZMQSocketLoop(context: context, type: .dealer, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setImmediate(true)
            try socket.setSendHighWaterMark(100_000)
            try socket.setReconnect(intervalMilliseconds: 100, maximumMilliseconds: 1_000)
            // A ledger that died without closing its connection is found in 3 s, and skipped.
            try socket.setHeartbeat(intervalMilliseconds: 1_000, timeoutMilliseconds: 3_000, ttlMilliseconds: 6_000)
            for endpoint in endpoints { try socket.connect(endpoint) }
        }
        let label = "storekeeper_verifier_ledger_handoffs_total"
        handedOver = Counter(label: label, dimensions: [("outcome", "handed_over")], factory: metricsFactory)
        answeredInstead = Counter(label: label, dimensions: [("outcome", "answered")], factory: metricsFactory)
    }

    func run() async throws {
        try await runUntilGracefulShutdown { group in
            group.addTask { try await self.socket.run() }
        }
    }

    /// `PoolWorker.HandOff`: sends the record `answer` stands for to a ledger,
    /// when `request` asked for that and `answer` has something to record;
    /// true when it went.
    @Sendable func handOff(_ request: Envelope, answer: Envelope, requestID: UInt64) -> Bool {
        guard request.handoffRecordDeadlineMs != nil else { return false }
        var sent = false
        if let (route, record) = Self.record(request, answer: answer, ledgers: ledgers) {
            let frames = RequestFrame.encodeHandOff(route: route, correlation: requestID, payload: record.frame())
            sent = (try? socket.trySend(frames)) ?? false
        }
        (sent ? handedOver : answeredInstead).increment()
        return sent
    }

    /// The gateway's route and the record for the ledger, when `request` asks
    /// for a hand-over to the `ledgers` this verifier reaches and `answer` is
    /// a result with purchases. Anything else (a failure, a receipt without
    /// purchases, which the gateway refuses, a gateway on other ledgers) goes
    /// back to the gateway.
    static func record(
        _ request: Envelope, answer: Envelope, ledgers: Set<String>
    ) -> (route: [UInt8], record: Envelope)? {
        guard case .verifyRequest(let verify) = request.body, verify.hasLedgerHandoff,
            case .verifyResult(let result) = answer.body, !result.transactions.isEmpty
        else { return nil }
        let handoff = verify.ledgerHandoff
        // The same ledgers, in any order (each list names a ledger once).
        let named = handoff.ledgerEndpoints
        guard !handoff.gatewayRoute.isEmpty, named.count == ledgers.count, named.allSatisfy(ledgers.contains) else {
            return nil
        }
        let record = RecordRequest.with {
            $0.userID = handoff.userID
            $0.result = result
        }
        return (
            [UInt8](handoff.gatewayRoute),
            Envelope(
                requestID: request.requestID, deadlineMilliseconds: handoff.recordDeadlineMs,
                body: .recordRequest(record))
        )
    }
}
