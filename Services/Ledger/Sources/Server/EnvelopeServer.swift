import Contracts
import Foundation
import LedgerClient
import Metrics
import Logging
import ServiceLifecycle
import Synchronization
import TaskLanes
import ZeroMQ

/// A ROUTER that answers envelopes (docs/ledger.md). Each request is taken
/// on the socket's thread and handed to the handler there. The handler
/// either takes it on itself (a write goes to the writer, which answers from
/// its thread once committed) or returns async work (a read), which runs in
/// the server's tasks. So a write crosses no task on its way through the
/// ledger: socket thread, writer, reply. Up to `maxInFlight` requests are
/// answered at once; beyond that a request is answered `overloaded`
/// (retryable) at once, not queued behind work that may outlive its
/// deadline. A reply to a client that went away is dropped (it timed out;
/// its retry is safe).
///
/// A record a verifier hands over (`LedgerHandoff`, `RequestFrame`) is
/// answered to the gateway it names, as a `RecordedReceipt`: the outcome and
/// the result recorded, which that gateway has not seen.
final class EnvelopeServer: Service, Sendable {
    typealias Reply = @Sendable (Envelope) -> Void
    typealias Work = @Sendable () async -> Void
    /// Takes an envelope on the socket's thread, where it must not block, and
    /// sees that `reply` is called exactly once: by what it hands the
    /// envelope to, or by the work it returns.
    typealias Handler = @Sendable (Envelope, _ reply: @escaping Reply) -> Work?

    static let overloaded = ServiceFailure(
        .overloaded, message: "the ledger is at capacity", retryable: true, retryAfterMilliseconds: 100)
    static let stopping = ServiceFailure(.internalError, message: "the ledger is stopping", retryable: true)
    /// Task groups the returned work runs in (see `TaskLanes`).
    static let workLanes = 4

    private let socket: ZMQSocketLoop
    private let handler: Handler
    private let logger: Logger
    private let maxInFlight: Int
    private let inFlight = Atomic<Int>(0)
    /// Where returned work runs, while `run()` runs.
    private let lanes = Mutex<TaskLanes<Work>?>(nil)
    private let bound = BoundEndpoint()
    /// Answers to hand-overs dropped because their gateway is not connected here.
    private let undelivered = Counter(label: "storekeeper_ledger_handoff_answers_dropped_total")
    private let undeliveredCount = Atomic<Int>(0)

    init(context: ZMQContext, endpoint: String, maxInFlight: Int = 8_192, logger: Logger, handler: @escaping Handler) {
        let bound = self.bound
        socket = ZMQSocketLoop(context: context, type: .router, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(100_000)
            try socket.setReceiveHighWaterMark(100_000)
            // An answer for a gateway not connected here fails instead of vanishing (see `take`).
            // The price: a reply to a client at its high-water mark (100,000) would hold up the
            // replies behind it instead of being dropped; answers are bounded by `maxInFlight`.
            try socket.setRouterMandatory(true)
            // A gateway names its socket (for hand-overs): reconnecting, it takes its name back.
            try socket.setRouterHandover(true)
            try socket.bind(endpoint)
            bound.set(try socket.lastEndpoint())
        }
        self.handler = handler
        self.logger = logger
        self.maxInFlight = maxInFlight
        socket.handleEachMessage { [unowned self] message in take(message) }
    }

    /// The endpoint bound (with the real port when bound to port 0), once running.
    var endpoint: String? { bound.value }

    func run() async throws {
        try await runUntilGracefulShutdown { group in
            group.addTask {
                try await withTaskLanes(count: Self.workLanes, perform: { work in await work() }) { lanes in
                    self.lanes.withLock { $0 = lanes }
                    defer { self.lanes.withLock { $0 = nil } }
                    try await self.socket.run()
                }
            }
        }
    }

    /// On the socket's thread: one request, handed to the handler.
    private func take(_ message: [[UInt8]]) {
        guard let (send, payload, handedOver) = route(message) else {
            logger.warning("dropped a message that is not a ledger request")
            return
        }
        if payload.isEmpty { return send([]) }
        let envelope: Envelope
        do {
            envelope = try Envelope(frame: payload)
        } catch {
            let code: FailureCode = error == .malformed || error == .missingBody ? .badRequest : .unsupportedContract
            return send(Envelope(requestID: "", body: .failure(ServiceFailure(code, message: error.description))).frame())
        }
        if handedOver, !Self.mayBeHandedOver(envelope.body) {
            return send(Envelope(requestID: envelope.requestID, body: .failure(Self.notARecord)).frame())
        }
        guard inFlight.add(1, ordering: .relaxed).newValue <= maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            return send(Envelope(requestID: envelope.requestID, body: .failure(Self.overloaded)).frame())
        }
        let reply: Reply = { reply in
            self.inFlight.subtract(1, ordering: .relaxed)
            send(handedOver ? Self.recordedReceipt(reply, request: envelope).frame() : reply.frame())
        }
        guard let work = handler(envelope, reply) else { return }
        if lanes.withLock({ $0?.submit(work) }) != true {
            reply(Envelope(requestID: envelope.requestID, body: .failure(Self.stopping)))
        }
    }

    /// Who answers a message, and its envelope: a client's request is answered
    /// to that client; a verifier's hand-over, to the gateway it names (true).
    private func route(
        _ message: [[UInt8]]
    ) -> (send: @Sendable ([UInt8]) -> Void, payload: [UInt8], handedOver: Bool)? {
        let socket = self.socket
        if let (correlation, request) = RequestFrame.decode(message.dropFirst()) {
            let client = message[0]
            return ({ socket.post([client] + RequestFrame.encode(correlation: correlation, payload: $0)) }, request, false)
        }
        guard let (gateway, correlation, request) = RequestFrame.decodeHandOff(message.dropFirst()), !request.isEmpty
        else { return nil }
        let send: @Sendable ([UInt8]) -> Void = { reply in
            socket.post([gateway] + RequestFrame.encodeHandedOverAnswer(correlation: correlation, payload: reply)) {
                [weak self] error in self?.undeliverable(error)
            }
        }
        return (send, request, true)
    }

    /// How many answers to hand-overs were dropped (tests, diagnostics).
    var undeliveredAnswers: Int { undeliveredCount.load(ordering: .relaxed) }

    /// An answer to a hand-over that libzmq refused. Its record stands: the
    /// gateway answers 503 at the record's deadline, and the client's retry
    /// finds the purchase in `already_granted`.
    private func undeliverable(_ error: any Error) {
        guard (error as? ZMQError)?.code == EHOSTUNREACH else { return }
        undeliveredCount.add(1, ordering: .relaxed)
        undelivered.increment()
        logger.warning("a gateway named by a verifier is not connected to this ledger; its answer was dropped")
    }

    static let notARecord = ServiceFailure(.internalError, message: "only a record may be handed over by a verifier")

    /// A verifier hands over records, nothing else.
    static func mayBeHandedOver(_ body: Envelope.OneOf_Body?) -> Bool {
        if case .recordRequest = body { return true }
        return false
    }

    /// The answer to a handed-over record, for a gateway that has not seen the
    /// result: the outcome with what its answer shows of the result; a failure as it is.
    static func recordedReceipt(_ answer: Envelope, request: Envelope) -> Envelope {
        guard case .recordOutcome(let outcome) = answer.body, case .recordRequest(let record) = request.body else {
            return answer
        }
        let result = record.result
        return Envelope(
            requestID: answer.requestID,
            body: .recordedReceipt(.with {
                $0.outcome = outcome
                $0.context = .with {
                    $0.environment = result.environment
                    $0.bundleID = result.bundleID
                    $0.appleStatus = result.appleStatus
                }
                $0.style = result.style
                $0.receiptSha256 = result.receiptSha256
            }))
    }
}
