import Contracts
import Logging
import ServiceLifecycle
import ZeroMQ

/// The ledger's PUB socket: every committed event as [topic, LedgerEvent].
/// The writer hands each commit's events over without waiting; one loop sends
/// them in seq order. PUB never waits for subscribers: a slow one loses
/// messages at its high-water mark, sees the jump in seq and catches up
/// through replay.
final class EventPublisher: Service, Sendable {
    private let socket: ZMQSocketLoop
    private let outgoing: AsyncStream<[CommittedEvent]>
    private let outgoingContinuation: AsyncStream<[CommittedEvent]>.Continuation

    init(context: ZMQContext, endpoint: String, logger: Logger) {
        socket = ZMQSocketLoop(context: context, type: .pub, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(100_000)
            try socket.bind(endpoint)
        }
        (outgoing, outgoingContinuation) = AsyncStream.makeStream()
    }

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.socket.run() }
            // Stopped last (after the writer): what was committed goes out before the socket closes.
            await withGracefulShutdownHandler {
                await self.sendLoop()
            } onGracefulShutdown: {
                self.outgoingContinuation.finish()
            }
            group.cancelAll()
        }
    }

    /// Queues one commit's events, in seq order; returns at once.
    func publish(_ events: [CommittedEvent]) {
        outgoingContinuation.yield(events)
    }

    private func sendLoop() async {
        for await events in outgoing {
            for committed in events {
                try? await socket.send([Array(committed.event.topic.utf8), committed.bytes])
            }
        }
    }
}
