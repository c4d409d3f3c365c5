import Contracts
import Foundation
import Logging
import Metrics
import RequestReply
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

    /// Everything the socket's loops share, changed in one step under one lock.
    struct State: ~Copyable {
        /// The waiting table and the timer loop's alarm; each request keeps its envelope, to send
        /// again when its verifier dies. Its ids start at random: a verifier still holding a request
        /// of this gateway's previous process (restarted at the same address) replies with that
        /// process's id, which must not match a request of this one, or a client would get another
        /// client's answer.
        var requests = PendingRequests<CheckedContinuation<[UInt8], any Error>, [UInt8]>(
            idsAfter: UInt64.random(in: 0..<(1 << 62)))
        var dispatcher: PoolDispatcher
        var heartbeat = HeartbeatSchedule(interval: VerifierPoolClient.heartbeatInterval)
        var repliesByWorker: [[UInt8]: Int] = [:]

        /// Something of the pool's own falls due at `instant`: true when the timer loop must wake for it.
        mutating func wakeTimer(for instant: ContinuousClock.Instant?) -> Bool {
            instant.map { requests.wakeTimer(for: $0) } ?? false
        }
    }

    public static let heartbeatInterval: Duration = .seconds(1)
    /// For an envelope without a deadline (every gateway request has one).
    public static let defaultDeadline: Duration = .seconds(30)

    private let socket: ZMQSocketLoop
    private let state: Mutex<State>
    /// Does what falls due: expiry, dead verifiers, heartbeats; see `timerTurn`.
    private let timer = TimerLoop()
    private let logger: Logger
    /// Reads envelope deadlines (milliseconds since the epoch).
    private let clock: WallClock
    private let boundEndpoint = BoundEndpoint()

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
        self.state = Mutex(State(dispatcher: PoolDispatcher(deadAfter: deadAfter)))
        self.logger = logger
        self.clock = clock
        socket.handleEachMessage { [weak self] message in self?.handle(message) }
    }

    /// The endpoint bound (with the real port when bound to `*`), once running.
    public var endpoint: String? { boundEndpoint.value }

    /// Live verifiers.
    public var workerCount: Int { state.withLock { $0.dispatcher.workerCount } }

    /// Live verifiers with a share of their capacity for this pool, for readiness (see `PoolDispatcher`).
    public var servingWorkerCount: Int { state.withLock { $0.dispatcher.servingWorkerCount } }

    /// How many replies each verifier (by its ZeroMQ identity) delivered: how work was spread.
    public var repliesByWorker: [Int] { state.withLock { Array($0.repliesByWorker.values) } }

    /// Requests held by verifiers right now.
    public var inFlightCount: Int { state.withLock { $0.dispatcher.inFlightCount } }

    /// Requests handed to another verifier because theirs died.
    public var redispatchedCount: Int { state.withLock { $0.dispatcher.redispatched } }

    public func run() async throws {
        defer { failAll() }
        try await runUntilGracefulShutdown { group in
            group.addTask { try await self.socket.run() }
            group.addTask { try await endingQuietlyOnCancellation { try await self.timer.run(self.timerTurn) } }
        }
    }

    /// Sends `envelope` to a verifier and waits for its answer, until the envelope's deadline.
    public func verify(_ envelope: Envelope) async throws -> Envelope {
        let bytes = envelope.frame()
        let deadline = envelope.deadlineMs == 0
            ? ContinuousClock.now + Self.defaultDeadline
            : ContinuousClock.now + clock.remaining(until: envelope.deadlineMs)
        // The caller waits while a verifier may still answer: past the deadline by the dispatcher's
        // grace once dispatched (queued, the dispatcher expires it at the deadline), or until the
        // record's deadline when a ledger may answer instead (`LedgerHandoff`).
        var waitUntil = deadline + PoolDispatcher.answerGrace
        if let recordBy = envelope.handoffRecordDeadlineMs {
            waitUntil = max(waitUntil, ContinuousClock.now + clock.remaining(until: recordBy))
        }
        let id = state.withLock { $0.requests.makeID() }
        let answer = try await awaitReply(refusal: Unavailable()) { continuation in
            let (admission, dispatches, wake) = state.withLock { state in
                let admission = state.requests.wait(id, waiter: continuation, deadline: waitUntil, payload: bytes)
                guard case .waiting(let wakeForGrace) = admission else { return (admission, [PoolDispatcher.Dispatch](), false) }
                let dispatches = state.dispatcher.submit(id, deadline: deadline, now: .now)
                // Queued, it expires at the deadline itself: the timer may have to wake for that.
                return (admission, dispatches, wakeForGrace || state.wakeTimer(for: deadline))
            }
            if wake { timer.wake() }
            send(dispatches)
            return admission
        } withdraw: {
            self.state.withLock { state in
                state.dispatcher.abandon(id)
                return state.requests.cancel(id)
            }
        }
        return try Envelope(frame: answer)
    }

    /// On the socket's thread, each message from a verifier: quick, and never
    /// waits (its sends are posted). A reply goes to its waiter,
    /// whose task decodes it; a receiving task cost a wake-up per message.
    private func handle(_ message: [[UInt8]]) {
        guard message.count >= 3, let (command, body) = PoolFrame.decode(message.dropFirst()) else {
            logger.warning("dropped a message that is not of the pool protocol")
            return
        }
        let worker = message[0]
        let now = ContinuousClock.now
        switch command {
        case .ready:
            let capacity = Int(body.first.flatMap(PoolFrame.uint32) ?? 0)
            // The share came with protocol version 1's second release; a first-release READY has none.
            let share = body.dropFirst().first.flatMap(PoolFrame.uint32).map(Int.init)
            logger.info("verifier ready", metadata: ["pool.capacity": "\(capacity)"])
            let (dispatches, wake) = state.withLock { state in
                let dispatches = state.dispatcher.ready(worker, capacity: capacity, share: share, now: now)
                // A first verifier starts the heartbeats; any may die before anything else is due.
                let death = now + state.dispatcher.deadAfter
                let beat = state.heartbeat.peerJoined(now: now) ?? death
                return (dispatches, state.wakeTimer(for: min(beat, death)))
            }
            if wake { timer.wake() }
            send(dispatches)
        case .credit:
            let credits = Int(body.first.flatMap(PoolFrame.uint32) ?? 0)
            send(state.withLock { $0.dispatcher.heard(from: worker, credits: credits, now: now) })
        case .reply:
            guard body.count == 2, let id = PoolFrame.uint64(body[0]) else { return }
            // An empty body: the verifier handed the result to a ledger, which answers the
            // waiter (`deliverHandedOver`); the REPLY only returns the credit.
            let handedOver = body[1].isEmpty
            let (waiter, dispatches) = state.withLock { state in
                let (deliver, dispatches) = state.dispatcher.replied(id, from: worker, now: now)
                if deliver { state.repliesByWorker[worker, default: 0] += 1 }
                return (deliver && !handedOver ? state.requests.answered(id) : nil, dispatches)
            }
            send(dispatches)
            waiter?.resume(returning: body[1])
        case .heartbeat:
            _ = state.withLock { $0.dispatcher.heard(from: worker, now: now) }
        case .disconnect:
            logger.info("verifier leaving")
            state.withLock { $0.dispatcher.draining(worker) }
        case .request:
            return
        }
    }

    /// A ledger's answer to request `id`, whose verifier handed its result to
    /// that ledger (`LedgerHandoff`): it goes to the waiter like a verifier's
    /// answer. The verifier's REPLY may come before or after it; whichever is
    /// second finds nothing more to do. The dispatcher forgets the request
    /// (its verifier's slot stays taken until that REPLY): should the verifier
    /// die first, the request is answered and must not go to another.
    public func deliverHandedOver(_ id: UInt64, _ payload: [UInt8]) {
        state.withLock { state in
            state.dispatcher.abandon(id)
            return state.requests.answered(id)
        }?.resume(returning: payload)
    }

    /// One turn of the timer loop: fails what is past its deadline, forgets
    /// dead verifiers and sends their requests to others, heartbeats the
    /// verifiers connected; then returns when the next of these falls due. No
    /// verifier and no request: nil, and the loop sleeps until one comes.
    private func timerTurn(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let (dispatches, failed, dead, beat, alarm) = state.withLock { state in
            let overdue = state.requests.timerWoke(now: now)
            for entry in overdue { state.dispatcher.abandon(entry.id) }
            let (dispatches, expired, dead) = state.dispatcher.tick(now: now)
            let failed = overdue.map(\.waiter) + state.requests.failed(expired)
            let workers = state.dispatcher.workerIDs
            let beat = state.heartbeat.due(now: now, peers: !workers.isEmpty) ? workers : []
            let due = [state.dispatcher.nextDue, state.heartbeat.next].compactMap { $0 }.min()
            return (dispatches, failed, dead, beat, state.requests.timerSleeps(alsoDue: due))
        }
        for worker in dead { logger.warning("verifier lost; its requests go to others", metadata: ["pool.worker": "\(Hex.lowercase(worker))"]) }
        send(dispatches)
        for waiter in failed { waiter.resume(throwing: Unavailable()) }
        for worker in beat { sendFrames([worker] + PoolFrame.encode(.heartbeat)) }
        return alarm
    }

    /// How many turns the timer loop took so far (tests: an idle client takes none after its first).
    var timerWakeups: Int { state.withLock { $0.requests.timerWakeups } }

    private func send(_ dispatches: [PoolDispatcher.Dispatch]) {
        for dispatch in dispatches {
            guard let envelope = state.withLock({ $0.requests.payload(of: dispatch.request) }) else { continue }
            sendFrames([dispatch.worker] + PoolFrame.encode(.request, [PoolFrame.uint64(dispatch.request), envelope]), to: dispatch.worker)
        }
    }

    /// Never waits: the socket loop queues what libzmq does not take at once,
    /// in order. A worker that cannot be reached (ROUTER_MANDATORY) is lost.
    private func sendFrames(_ frames: [[UInt8]], to worker: [UInt8]? = nil) {
        guard let worker else { return socket.post(frames) }
        socket.post(frames) { [weak self] _ in self?.lose(worker) }
    }

    /// A worker that cannot be reached is dropped and its work moves on.
    private func lose(_ worker: [UInt8]) {
        let (lost, failed, wake) = state.withLock { state in
            let lost = state.dispatcher.lost(worker, now: .now)
            // Its requests went back to the queue, where they expire at their deadline.
            return (lost, state.requests.failed(lost.expired), state.wakeTimer(for: state.dispatcher.nextDue))
        }
        if wake { timer.wake() }
        send(lost.dispatches)
        for waiter in failed { waiter.resume(throwing: Unavailable()) }
    }

    /// The client stopped: whoever still waits hears so now, and later requests are refused.
    private func failAll() {
        for waiter in state.withLock({ $0.requests.stop() }) { waiter.resume(throwing: Unavailable()) }
    }
}

