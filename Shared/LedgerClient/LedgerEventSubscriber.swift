import Contracts
import Logging
import ZeroMQ

/// Follows the ledger's event stream with no gap and no duplicate (the ZeroMQ
/// guide's Clone pattern): it subscribes first, catches up through replay from
/// the last seq it was given, then delivers live events, skipping what it has
/// seen and replaying whatever a jump in seq (or a quiet second) says it missed.
/// A PUB socket drops for slow subscribers; this is how they recover.
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
            var cursor = Cursor(last: seq)
            try await catchUp(&cursor, replay: replay, deliver: deliver)
            while true {
                guard let frames = try await live.receive(timeout: idleCheck) else {
                    try await catchUp(&cursor, replay: replay, deliver: deliver)
                    continue
                }
                guard frames.count == 2, let event = try? LedgerEvent(serializedBytes: frames[1]) else { continue }
                if event.seq > cursor.last + 1 {
                    try await catchUp(&cursor, replay: replay, deliver: deliver)
                }
                if event.seq == cursor.last + 1 {
                    try await deliver(event)
                    cursor.last = event.seq
                }
            }
        }
    }

    struct Cursor {
        var last: UInt64
    }

    /// Replays everything after the cursor up to the ledger's head.
    private func catchUp(
        _ cursor: inout Cursor, replay: EnvelopeClient, deliver: @Sendable (LedgerEvent) async throws -> Void
    ) async throws {
        while true {
            let request = ReplayRequest.with { $0.afterSeq = cursor.last }
            let answer: Envelope
            do {
                answer = try await replay.request(Envelope(requestID: "replay", body: .replayRequest(request)))
            } catch is EnvelopeClient.Timeout {
                // The ledger is restarting: ask again (cancellation ends the wait).
                logger.debug("replay did not answer; asking again")
                try await Task.sleep(for: .milliseconds(200))
                continue
            }
            guard case .replayBatch(let batch) = answer.body else {
                throw ServiceFailure(.internalError, message: "the ledger answered replay with an unexpected message")
            }
            if batch.oldestRetainedSeq > cursor.last + 1 {
                throw EventsLost(afterSeq: cursor.last, oldestRetainedSeq: batch.oldestRetainedSeq)
            }
            for event in batch.events where event.seq == cursor.last + 1 {
                try await deliver(event)
                cursor.last = event.seq
            }
            if !batch.more { return }
        }
    }
}
