import Contracts
import LedgerClient
import Logging
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// A ROUTER that answers envelopes (docs/ledger.md): each request is handled
/// concurrently, up to `maxInFlight`; beyond that it stops reading and
/// ZeroMQ's queues push back on the clients. A reply to a client that went
/// away is dropped (it timed out; its retry is safe).
final class EnvelopeServer: Service, Sendable {
    typealias Handler = @Sendable (Envelope) async -> Envelope

    private let socket: ZMQSocketLoop
    private let handler: Handler
    private let logger: Logger
    private let maxInFlight: Int
    private let bound = BoundEndpoint()

    init(context: ZMQContext, endpoint: String, maxInFlight: Int = 8_192, logger: Logger, handler: @escaping Handler) {
        let bound = self.bound
        socket = ZMQSocketLoop(context: context, type: .router, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(100_000)
            try socket.setReceiveHighWaterMark(100_000)
            try socket.bind(endpoint)
            bound.set(try socket.lastEndpoint())
        }
        self.handler = handler
        self.logger = logger
        self.maxInFlight = maxInFlight
    }

    /// The endpoint bound (with the real port when bound to port 0), once running.
    var endpoint: String? { bound.value }

    func run() async throws {
        try await runUntilGracefulShutdown { group in
            group.addTask { try await self.socket.run() }
            group.addTask { try await endingQuietlyOnCancellation { try await self.serve() } }
        }
    }

    private func serve() async throws {
        let slots = AsyncSlots(maxInFlight)
        try await withThrowingDiscardingTaskGroup { group in
            while true {
                await slots.acquire()
                let message = try await socket.receive()
                guard message.count == 3, let (correlation, payload) = RequestFrame.decode(message.dropFirst()) else {
                    slots.release()
                    logger.warning("dropped a message that is not a ledger request")
                    continue
                }
                let client = message[0]
                group.addTask {
                    defer { slots.release() }
                    let reply = payload.isEmpty ? [] : await self.answer(payload)
                    try? await self.socket.send([client] + RequestFrame.encode(correlation: correlation, payload: reply))
                }
            }
        }
    }

    private func answer(_ payload: [UInt8]) async -> [UInt8] {
        do {
            return await handler(try Envelope(frame: payload)).frame()
        } catch {
            let code: FailureCode = error == .malformed || error == .missingBody ? .badRequest : .unsupportedContract
            return Envelope(requestID: "", body: .failure(ServiceFailure(code, message: error.description))).frame()
        }
    }
}

/// A counting semaphore for async code: at most `count` holders at once.
final class AsyncSlots: Sendable {
    private struct State: ~Copyable {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(free: count)) }

    func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiters.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst()
        }?.resume()
    }
}
