import Contracts
import Foundation
import Logging
import Metrics
import StorekeeperCore
import ServiceLifecycle
import Synchronization
import Timekeeping
import ZeroMQ

/// The gateway's end of the verifier pool: binds a ROUTER that verifiers
/// connect to, and sends each verify request to one of them (see
/// `PoolDispatcher` for the rules and docs/verifier-pool.md for the wire).
/// Verifiers may come and go at any time; several gateways may share them.
public final class VerifierPoolClient: Service, Sendable {
    public struct Unavailable: Error, Equatable, CustomStringConvertible {
        public var description: String { "no verifier answered before the deadline" }
    }

    struct State: ~Copyable {
        var dispatcher: PoolDispatcher
        /// Starts at random: a verifier still holding a request of this gateway's previous process
        /// (restarted at the same address) replies with that process's id, which must not match a
        /// request of this one, or a client would get another client's answer.
        var nextID = UInt64.random(in: 0..<(1 << 62))
        var waiting: [UInt64: (envelope: [UInt8], continuation: CheckedContinuation<Envelope, any Error>)] = [:]
        var repliesByWorker: [[UInt8]: Int] = [:]
    }

    public static let heartbeatInterval: Duration = .seconds(1)
    /// For an envelope without a deadline (every gateway request has one).
    public static let defaultDeadline: Duration = .seconds(30)

    private let socket: ZMQSocketLoop
    private let state: Mutex<State>
    private let logger: Logger
    /// Reads envelope deadlines (milliseconds since the epoch).
    private let clock: WallClock
    private let boundEndpoint = BoundEndpoint()
    /// Everything to send goes through one stream, drained by one task of `run()`.
    private let outgoing: AsyncStream<(frames: [[UInt8]], worker: [UInt8]?)>
    private let outgoingContinuation: AsyncStream<(frames: [[UInt8]], worker: [UInt8]?)>.Continuation

    public init(
        context: ZMQContext, endpoint: String, deadAfter: Duration = .seconds(3), clock: WallClock = .system,
        logger: Logger
    ) {
        let bound = boundEndpoint
        self.socket = ZMQSocketLoop(context: context, type: .router) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.setRouterMandatory(true)
            try socket.bind(endpoint)
            bound.set(try socket.lastEndpoint())
        }
        (outgoing, outgoingContinuation) = AsyncStream.makeStream()
        self.state = Mutex(State(dispatcher: PoolDispatcher(deadAfter: deadAfter)))
        self.logger = logger
        self.clock = clock
    }

    /// The endpoint bound (with the real port when bound to `*`), once running.
    public var endpoint: String? { boundEndpoint.value }

    /// Live verifiers, for readiness.
    public var workerCount: Int { state.withLock { $0.dispatcher.workerCount } }

    /// How many replies each verifier (by its ZeroMQ identity) delivered: how work was spread.
    public var repliesByWorker: [Int] { state.withLock { Array($0.repliesByWorker.values) } }

    /// Requests held by verifiers right now.
    public var inFlightCount: Int { state.withLock { $0.dispatcher.inFlightCount } }

    /// Requests handed to another verifier because theirs died.
    public var redispatchedCount: Int { state.withLock { $0.dispatcher.redispatched } }

    public func run() async throws {
        defer { failAll(Unavailable()) }
        try await runUntilGracefulShutdown { group in
            group.addTask { try await self.socket.run() }
            group.addTask { try await endingQuietlyOnCancellation { try await self.receiveLoop() } }
            group.addTask { try await endingQuietlyOnCancellation { try await self.tickLoop() } }
            group.addTask { await self.sendLoop() }
        }
    }

    /// Sends `envelope` to a verifier and waits for its answer, until the envelope's deadline.
    public func verify(_ envelope: Envelope) async throws -> Envelope {
        let bytes = envelope.frame()
        let deadline = envelope.deadlineMs == 0
            ? ContinuousClock.now + Self.defaultDeadline
            : ContinuousClock.now + clock.remaining(until: envelope.deadlineMs)
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let dispatches = state.withLock { state in
                    state.waiting[id] = (bytes, continuation)
                    return state.dispatcher.submit(id, deadline: deadline, now: .now)
                }
                send(dispatches)
            }
        } onCancel: {
            let waiting = state.withLock { state in
                state.dispatcher.abandon(id)
                return state.waiting.removeValue(forKey: id)
            }
            waiting?.continuation.resume(throwing: CancellationError())
        }
    }

    private func receiveLoop() async throws {
        while true {
            let message = try await socket.receive()
            guard message.count >= 3, let (command, body) = PoolFrame.decode(message.dropFirst()) else {
                logger.warning("dropped a message that is not of the pool protocol")
                continue
            }
            let worker = message[0]
            let now = ContinuousClock.now
            switch command {
            case .ready:
                let capacity = Int(body.first.flatMap(PoolFrame.uint32) ?? 0)
                logger.info("verifier ready", metadata: ["pool.capacity": "\(capacity)"])
                send(state.withLock { $0.dispatcher.ready(worker, capacity: capacity, now: now) })
            case .credit:
                let credits = Int(body.first.flatMap(PoolFrame.uint32) ?? 0)
                send(state.withLock { $0.dispatcher.heard(from: worker, credits: credits, now: now) })
            case .reply:
                guard body.count == 2, let id = PoolFrame.uint64(body[0]) else { continue }
                let (waiting, dispatches) = state.withLock { state in
                    let (deliver, dispatches) = state.dispatcher.replied(id, from: worker, now: now)
                    if deliver { state.repliesByWorker[worker, default: 0] += 1 }
                    return (deliver ? state.waiting.removeValue(forKey: id) : nil, dispatches)
                }
                send(dispatches)
                guard let waiting else { continue }
                do {
                    waiting.continuation.resume(returning: try Envelope(frame: body[1]))
                } catch {
                    waiting.continuation.resume(throwing: error)
                }
            case .heartbeat:
                _ = state.withLock { $0.dispatcher.heard(from: worker, now: now) }
            case .disconnect:
                logger.info("verifier leaving")
                state.withLock { $0.dispatcher.draining(worker) }
            case .request:
                continue
            }
        }
    }

    private func tickLoop() async throws {
        var lastHeartbeat = ContinuousClock.now
        while true {
            try await Task.sleep(for: .milliseconds(250))
            let now = ContinuousClock.now
            let (dispatches, expired, dead, workers) = state.withLock { state in
                let (dispatches, expired, dead) = state.dispatcher.tick(now: now)
                return (dispatches, expired, dead, state.dispatcher.workerIDs)
            }
            for worker in dead { logger.warning("verifier lost; its requests go to others", metadata: ["pool.worker": "\(Hex.lowercase(worker))"]) }
            send(dispatches)
            fail(expired, with: Unavailable())
            if now - lastHeartbeat >= Self.heartbeatInterval {
                lastHeartbeat = now
                for worker in workers { sendFrames([worker] + PoolFrame.encode(.heartbeat)) }
            }
        }
    }

    private func send(_ dispatches: [PoolDispatcher.Dispatch]) {
        for dispatch in dispatches {
            guard let envelope = state.withLock({ $0.waiting[dispatch.request]?.envelope }) else { continue }
            sendFrames([dispatch.worker] + PoolFrame.encode(.request, [PoolFrame.uint64(dispatch.request), envelope]), to: dispatch.worker)
        }
    }

    private func sendFrames(_ frames: [[UInt8]], to worker: [UInt8]? = nil) {
        outgoingContinuation.yield((frames, worker))
    }

    /// Hands frames to the socket in order; a worker that cannot be reached
    /// (ROUTER_MANDATORY) is dropped and its work moves on.
    private func sendLoop() async {
        for await (frames, worker) in outgoing {
            do {
                try await socket.send(frames)
            } catch {
                guard let worker else { continue }
                let lost = state.withLock { $0.dispatcher.lost(worker, now: .now) }
                send(lost.dispatches)
                fail(lost.expired, with: Unavailable())
            }
        }
    }

    private func fail(_ ids: [UInt64], with error: any Error) {
        for id in ids {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume(throwing: error)
        }
    }

    private func failAll(_ error: any Error) {
        let all = state.withLock { state in
            let all = state.waiting.values.map(\.continuation)
            state.waiting.removeAll()
            return all
        }
        for continuation in all { continuation.resume(throwing: error) }
    }
}

