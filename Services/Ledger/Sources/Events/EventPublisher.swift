import Contracts
import Logging
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// The ledger's PUB socket: every committed event as [topic, LedgerEvent].
/// The writer hands each commit's events over without waiting. They go to
/// libzmq on its thread when nothing is queued before them, otherwise to one
/// loop that sends them after what it holds: either way, in seq order. PUB
/// never waits for subscribers: a slow one loses messages at its high-water
/// mark, sees the jump in seq and catches up through replay.
final class EventPublisher: Service, Sendable {
    /// One event's frames to libzmq now, or not at all (false).
    typealias SendNow = @Sendable ([[UInt8]]) -> Bool
    /// One event's frames, waiting for the socket if need be.
    typealias SendInTurn = @Sendable ([[UInt8]]) async -> Void

    private let socket: ZMQSocketLoop?
    private let sendNow: SendNow
    private let sendInTurn: SendInTurn
    private let outgoing: AsyncStream<[CommittedEvent]>
    private let outgoingContinuation: AsyncStream<[CommittedEvent]>.Continuation
    /// Commits in the send loop's stream, not yet sent. Held while sending
    /// directly, so that two publishers cannot interleave their events.
    private let queuedCommits = Mutex(0)

    convenience init(context: ZMQContext, endpoint: String, logger: Logger) {
        let socket = ZMQSocketLoop(context: context, type: .pub, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(100_000)
            try socket.bind(endpoint)
        }
        self.init(
            socket: socket, sendNow: { (try? socket.trySend($0)) == true }, sendInTurn: { try? await socket.send($0) })
    }

    /// `socket` runs with the publisher; tests pass none, and their own two ways out.
    init(socket: ZMQSocketLoop?, sendNow: @escaping SendNow, sendInTurn: @escaping SendInTurn) {
        self.socket = socket
        self.sendNow = sendNow
        self.sendInTurn = sendInTurn
        (outgoing, outgoingContinuation) = AsyncStream.makeStream()
    }

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            if let socket { group.addTask { try await socket.run() } }
            // Stopped last (after the writer): what was committed goes out before the socket closes.
            await withGracefulShutdownHandler {
                await self.sendLoop()
            } onGracefulShutdown: {
                self.outgoingContinuation.finish()
            }
            group.cancelAll()
        }
    }

    /// Sends or queues one commit's events, in seq order; returns at once.
    /// Sending directly saves the send loop's wake-up per commit.
    func publish(_ events: [CommittedEvent]) {
        queuedCommits.withLock { queued in
            var unsent = events[...]
            if queued == 0 {
                while let first = unsent.first, sendNow(Self.frames(first)) { unsent = unsent.dropFirst() }
                if unsent.isEmpty { return }
            }
            // Counted only when the loop will take it: once stopped, the stream drops what it gets.
            if case .enqueued = outgoingContinuation.yield(Array(unsent)) { queued += 1 }
        }
    }

    private func sendLoop() async {
        for await events in outgoing {
            for committed in events { await sendInTurn(Self.frames(committed)) }
            queuedCommits.withLock { $0 -= 1 }
        }
    }

    /// Commits waiting in the send loop (tests).
    var queuedCommitCount: Int { queuedCommits.withLock { $0 } }

    private static func frames(_ committed: CommittedEvent) -> [[UInt8]] {
        [Array(committed.event.topic.utf8), committed.bytes]
    }
}
