import Contracts
import Logging
import ZeroMQ

/// Follows the ledger's event stream with no gap and no duplicate (the ZeroMQ
/// guide's Clone pattern): it subscribes first, catches up through replay from
/// the last seq it was given, then delivers live events, skipping what it has
/// seen and replaying whatever a jump in seq (or a quiet second) says it missed.
/// A PUB socket drops for slow subscribers; this is how they recover. The
/// rules are `EventSubscriptionStateMachine`'s; this runs the sockets.
public struct LedgerEventSubscriber: Sendable {
    /// Retention removed events this subscriber had not seen: it must resynchronize from state.
    public struct EventsLost: Error, Equatable, CustomStringConvertible {
        public let afterSeq: UInt64
        public let oldestRetainedSeq: UInt64
        public var description: String {
            "events after seq \(afterSeq) are no longer retained (oldest is \(oldestRetainedSeq))"
        }
    }

    let context: ZMQContext
    let eventsEndpoint: String
    let replayEndpoint: String
    let logger: Logger
    /// How long without a live event before asking replay whether something was missed.
    let idleCheck: Duration

    public init(
        context: ZMQContext, eventsEndpoint: String, replayEndpoint: String, idleCheck: Duration = .seconds(1),
        logger: Logger
    ) {
        self.context = context
        self.eventsEndpoint = eventsEndpoint
        self.replayEndpoint = replayEndpoint
        self.idleCheck = idleCheck
        self.logger = logger
    }

    /// Delivers every event with seq > `seq`, each once, in order, until
    /// cancelled or `deliver` throws.
    public func run(after seq: UInt64, deliver: @Sendable (LedgerEvent) async throws -> Void) async throws {
        let endpoint = eventsEndpoint
        let live = ZMQSocketLoop(context: context, type: .sub, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveHighWaterMark(100_000)
            try socket.subscribe("")
            try socket.connect(endpoint)
        }
        let replay = EnvelopeClient(context: context, endpoint: replayEndpoint, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await live.run() }
            group.addTask { try await replay.run() }
            defer { group.cancelAll() }
            var machine = EventSubscriptionStateMachine(after: seq)
            var step = machine.start()
            while true {
                for event in step.deliver { try await deliver(event) }
                switch step.next {
                case .replay(let after):
                    step = try await replayed(after: after, replay: replay, &machine)
                case .replayAgain(let after, let delay):
                    logger.debug("replay did not answer; asking again")
                    try await Task.sleep(for: delay)
                    step = try await replayed(after: after, replay: replay, &machine)
                case .awaitLive:
                    guard let frames = try await live.receive(timeout: idleCheck) else {
                        step = machine.idle()
                        continue
                    }
                    guard frames.count == 2, let event = try? LedgerEvent(serializedBytes: frames[1]) else {
                        step = .init(next: .awaitLive)
                        continue
                    }
                    step = machine.live(event)
                case .fail(let lost):
                    throw lost
                }
            }
        }
    }

    /// Asks replay for what follows `after`; the machine's step for its answer.
    private func replayed(
        after: UInt64, replay: EnvelopeClient, _ machine: inout EventSubscriptionStateMachine
    ) async throws -> EventSubscriptionStateMachine.Step {
        let request = ReplayRequest.with { $0.afterSeq = after }
        let answer: Envelope
        do {
            answer = try await replay.request(Envelope(requestID: "replay", body: .replayRequest(request)))
        } catch is EnvelopeClient.Timeout {
            // The ledger is restarting: ask again (cancellation ends the wait).
            return machine.replayUnanswered()
        }
        switch answer.body {
        case .replayBatch(let batch):
            return machine.replayed(batch)
        case .failure(let failure) where failure.retryable:
            // The ledger is stopping or at capacity: ask again.
            return machine.replayUnanswered()
        default:
            throw ServiceFailure(.internalError, message: "the ledger answered replay with an unexpected message")
        }
    }
}
