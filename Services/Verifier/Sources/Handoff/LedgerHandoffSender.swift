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
/// path (bench/JOURNAL.md, "fewer hops").
///
/// It never waits and never queues: with no ledger connected that a probe's
/// answer vouches for (an old ledger never answers), or libzmq's queue full,
/// the answer goes back through the pool as before, and the gateway records
/// it. The ledgers vouched for take turns. Only ledgers connected now take
/// messages (`ZMQ_IMMEDIATE`), so a ledger that is down holds no result.
final class LedgerHandoffSender: Service, Sendable {
    /// One per ledger, in the sorted order of the endpoints.
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
        links = ledgers.sorted().map { HandoffLink(context: context, endpoint: $0, logger: logger) }
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
    var anyLedgerVouchedFor: Bool { links.contains { $0.isVouchedFor(atMs: $0.now()) } }

    /// As a request arrives, before it is verified: if it asks for a
    /// hand-over, probes each ledger whose vouch is missing or about to end,
    /// so that the answer is back by the time the result is.
    @Sendable func prepare(_ request: Envelope) {
        guard case .verifyRequest(let verify) = request.body, verify.hasLedgerHandoff else { return }
        for link in links { link.probeIfDue(atMs: link.now()) }
    }

    /// `PoolWorker.HandOff`: sends the record `answer` stands for to a ledger,
    /// when `request` asked for that and `answer` has something to record;
    /// true when it went.
    @Sendable func handOff(_ request: Envelope, answer: Envelope, requestID: UInt64) -> Bool {
        switch Self.decide(request, answer: answer, ledgers: ledgers, nowMs: clock.now()) {
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
            let sent = send { RequestFrame.encodeHandOff(route: route, correlation: requestID, payload: record.frame()) }
            (sent ? handedOver : answeredInstead).increment()
            return sent
        }
    }

    /// To a ledger vouched for now, taking turns among those, or the next one
    /// if libzmq refuses it; `frames` is built only when there is one.
    private func send(_ frames: () -> [[UInt8]]) -> Bool {
        if links.count == 1 {  // the usual case, without the list below
            return links[0].isVouchedFor(atMs: links[0].now()) && links[0].trySend(frames())
        }
        let vouched = links.indices.filter { links[$0].isVouchedFor(atMs: links[$0].now()) }
        guard !vouched.isEmpty else { return false }
        let message = frames()
        let first = Int(turn.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(vouched.count))
        for offset in 0..<vouched.count where links[vouched[(first + offset) % vouched.count]].trySend(message) {
            return true
        }
        return false
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
