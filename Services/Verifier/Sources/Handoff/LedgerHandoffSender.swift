import Contracts
import LedgerClient
import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import Timekeeping
import ZeroMQ

/// The verifier's side of `LedgerHandoff`: a DEALER to each ledger
/// (`STOREKEEPER_LEDGER_ENDPOINT`, `HandoffLink`). A receipt's verified result
/// goes from here straight to a ledger as a `RecordRequest`, and that ledger
/// answers the gateway, which then never carries the result to the ledger
/// itself: one ZeroMQ hop and its thread wake-ups fewer on every receipt's
/// path (bench/README, "fewer hops").
///
/// It never waits and never queues: with no ledger connected that has
/// answered a probe lately (an old ledger never does), or libzmq's queue
/// full, the answer goes back through the pool as before, and the gateway
/// records it. Ledgers take turns. Only ledgers connected now take messages
/// (`ZMQ_IMMEDIATE`), so a ledger that is down holds no result.
final class LedgerHandoffSender: Service, Sendable {
    /// One per ledger, in the order of the endpoints.
    private let links: [HandoffLink]
    /// `STOREKEEPER_LEDGER_ENDPOINT`, which a gateway's request must name too.
    private let ledgers: Set<String>
    /// The next ledger's turn.
    private let turn = Atomic<UInt>(0)
    private let clock: WallClock
    private let handedOver: Counter
    private let answeredInstead: Counter
    private let otherLedgers: Counter
    /// A gateway on other ledgers is a deployment's mistake: said once, counted always.
    private let warnedOfOtherLedgers = Atomic<Bool>(false)
    private let logger: Logger

    init(
        context: ZMQContext, endpoints: [String], metricsFactory: any MetricsFactory = MetricsSystem.factory,
        clock: WallClock = .system, logger: Logger
    ) {
        ledgers = Set(endpoints)
        self.clock = clock
        links = ledgers.sorted().map { HandoffLink(context: context, endpoint: $0, clock: clock, logger: logger) }
        let label = "storekeeper_verifier_ledger_handoffs_total"
        handedOver = Counter(label: label, dimensions: [("outcome", "handed_over")], factory: metricsFactory)
        answeredInstead = Counter(label: label, dimensions: [("outcome", "answered")], factory: metricsFactory)
        otherLedgers = Counter(label: label, dimensions: [("outcome", "other_ledgers")], factory: metricsFactory)
        self.logger = logger
    }

    func run() async throws {
        try await runUntilGracefulShutdown { group in
            for link in self.links { group.addTask { try await link.socket.run() } }
        }
    }

    /// Whether some ledger takes hand-overs now (tests, diagnostics).
    var anyLedgerVouchedFor: Bool {
        let now = clock.now()
        return links.contains { $0.isVouchedFor(atMs: now) }
    }

    /// `PoolWorker.HandOff`: sends the record `answer` stands for to a ledger,
    /// when `request` asked for that and `answer` has something to record;
    /// true when it went.
    @Sendable func handOff(_ request: Envelope, answer: Envelope, requestID: UInt64) -> Bool {
        let now = clock.now()
        switch Self.decide(request, answer: answer, ledgers: ledgers, nowMs: now) {
        case .notAsked:
            return false
        case .otherLedgers(let named):
            otherLedgers.increment()
            if !warnedOfOtherLedgers.exchange(true, ordering: .relaxed) {
                logger.warning(
                    "a gateway names other ledgers than STOREKEEPER_LEDGER_ENDPOINT here: its receipts are answered through the pool",
                    metadata: ["ledger.gateway": "\(named.joined(separator: ","))"])
            }
            return false
        case .answer:
            answeredInstead.increment()
            return false
        case .send(let route, let record):
            let sent = send(RequestFrame.encodeHandOff(route: route, correlation: requestID, payload: record.frame()), atMs: now)
            (sent ? handedOver : answeredInstead).increment()
            return sent
        }
    }

    /// To the first ledger, from this turn on, that is vouched for and takes it now.
    /// Every ledger is probed on the way if due, so a vouch is renewed before it ends.
    private func send(_ frames: [[UInt8]], atMs now: Int64) -> Bool {
        let first = turn.wrappingAdd(1, ordering: .relaxed).oldValue
        var sent = false
        for offset in 0..<links.count {
            let link = links[Int((first &+ UInt(offset)) % UInt(links.count))]
            link.probeIfDue(atMs: now)
            if !sent, link.isVouchedFor(atMs: now) { sent = link.trySend(frames) }
        }
        return sent
    }

    /// What becomes of an answer to a request that may ask for a hand-over.
    enum Decision: Equatable {
        /// The request did not ask: the answer goes back to the gateway.
        case notAsked
        /// The gateway names these ledgers, not this verifier's: back to the gateway.
        case otherLedgers([String])
        /// Nothing for a ledger: a failure, a receipt without purchases (the
        /// gateway refuses it), or a result past the verification's deadline
        /// (the gateway may have answered 503 already, and must not find the
        /// purchase recorded behind its back). Back to the gateway.
        case answer
        /// The record, for a ledger to answer the gateway at `route`.
        case send(route: [UInt8], record: Envelope)
    }

    static func decide(_ request: Envelope, answer: Envelope, ledgers: Set<String>, nowMs: Int64) -> Decision {
        guard case .verifyRequest(let verify) = request.body, verify.hasLedgerHandoff else { return .notAsked }
        let handoff = verify.ledgerHandoff
        guard names(handoff.ledgerEndpoints, ledgers) else { return .otherLedgers(handoff.ledgerEndpoints) }
        guard case .verifyResult(let result) = answer.body, !result.transactions.isEmpty, !handoff.gatewayRoute.isEmpty,
            request.deadlineMs == 0 || nowMs < request.deadlineMs
        else { return .answer }
        let record = RecordRequest.with {
            $0.userID = handoff.userID
            $0.result = result
        }
        return .send(
            route: [UInt8](handoff.gatewayRoute),
            record: Envelope(
                requestID: request.requestID, deadlineMilliseconds: handoff.recordDeadlineMs,
                body: .recordRequest(record)))
    }

    /// Whether a gateway's ledger list names the same endpoints as `ledgers`, in any order.
    static func names(_ list: [String], _ ledgers: Set<String>) -> Bool {
        // Without building a set for the usual case: one ledger, named once.
        if list.count == 1, ledgers.count == 1 { return ledgers.contains(list[0]) }
        return Set(list) == ledgers
    }
}
