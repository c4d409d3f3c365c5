import Contracts
import Logging
import ServiceLifecycle
import ZeroMQ

/// The ledger's PUB socket: every committed event as [topic, LedgerEvent].
/// PUB never waits for subscribers: a slow one loses messages at its
/// high-water mark, sees the jump in seq and catches up through replay.
final class EventPublisher: Service, Sendable {
    private let socket: ZMQSocketLoop

    init(context: ZMQContext, endpoint: String, logger: Logger) {
        socket = ZMQSocketLoop(context: context, type: .pub, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(100_000)
            try socket.bind(endpoint)
        }
    }

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.socket.run() }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }

    func publish(_ events: [LedgerEvent]) async {
        for event in events {
            guard let bytes: [UInt8] = try? event.serializedBytes() else { continue }
            try? await socket.send([Array(event.topic.utf8), bytes])
        }
    }
}
