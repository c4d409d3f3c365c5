import Contracts
import Logging
import ServiceLifecycle
import ZeroMQ

/// The ledger's PUB socket: every committed event as [topic, LedgerEvent].
/// The writer posts each commit's events without waiting, on its own thread;
/// the socket loop keeps them in the order posted, so in seq order. PUB never
/// waits for subscribers: a slow one loses messages at its high-water mark,
/// sees the jump in seq and catches up through replay.
final class EventPublisher: Service, Sendable {
    private let socket: ZMQSocketLoop

    init(context: ZMQContext, endpoint: String, logger: Logger) {
        socket = ZMQSocketLoop(context: context, type: .pub, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(100_000)
            try socket.bind(endpoint)
        }
    }

    /// Until graceful shutdown. Stopped last (after the writer): its stop
    /// gives what is still queued one last try before the socket closes.
    func run() async throws {
        try await runUntilGracefulShutdown { group in
            group.addTask { try await self.socket.run() }
        }
    }

    /// Sends one commit's events, in seq order; returns at once. Events
    /// posted before the socket runs go out once it does.
    func publish(_ events: [CommittedEvent]) {
        for committed in events { socket.post([Array(committed.event.topic.utf8), committed.bytes]) }
    }
}
