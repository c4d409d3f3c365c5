import Contracts
import Foundation
import Logging
import OSThread
import RequestReply
import ServiceLifecycle
import Synchronization
import TaskLanes
import ZeroMQ

/// A verifier's end of one pool: a DEALER connected to one gateway's ROUTER
/// (or the ledger's refresh pool). It announces its share of the verifier's
/// capacity (READY), answers each request with a REPLY (which returns the
/// credit), heartbeats every second, reports what it used to the verifier's
/// `VerifierCapacity` then, and announces again when its share changes or
/// the gateway has gone silent (see `PoolWorkerStateMachine`).
///
/// One worker per address, never one socket connected to several: a DEALER
/// deals its messages round-robin over its connections, so a READY, a
/// heartbeat or a REPLY would reach whichever gateway is next, and a gateway
/// would get answers to requests it never sent while another never learnt of
/// the worker at all.
///
/// It leaves on graceful shutdown, or when asked (`leave()`: its address
/// left DNS). If its gateway is alive it sends DISCONNECT, finishes what it
/// holds, then stops; if the gateway has been silent past `gatewayDeadAfter`
/// it disconnects at once and drops what it holds.
public final class PoolWorker: Service, Sendable {
    public typealias Handler = @Sendable (Envelope) async -> Envelope
    /// Sends `answer` to `request` somewhere other than the gateway (a verifier
    /// hands a receipt's result to a ledger, `LedgerHandoff`), on the thread
    /// that answered; true when it went, and the REPLY then has an empty body.
    /// `requestID` is the gateway's pool request id.
    public typealias HandOff = @Sendable (_ request: Envelope, _ answer: Envelope, _ requestID: UInt64) -> Bool
    /// Task groups the requests in flight are spread over (see `TaskLanes`).
    static let laneCount = 32

    public let endpoint: String
    private let socket: ZMQSocketLoop
    private let capacity: PoolCapacity
    private let heartbeatInterval: Duration
    private let handler: Handler
    private let handOff: HandOff?
    private let logger: Logger
    private let state: Mutex<PoolWorkerStateMachine>
    private let leaveRequest = LeaveRequest()
    /// Rung when the worker comes to hold nothing: a leaving worker waits for it, instead of polling.
    private let idle = Doorbell()
    /// Heartbeats that could not go at once (diagnostics and tests).
    private let skippedBeats = Atomic<Int>(0)
    typealias Request = (id: [UInt8], frame: [UInt8])
    /// Where the socket's thread hands each request: set while the worker
    /// takes requests (from just before its first READY until leaving is done).
    private let intake = Mutex<TaskLanes<Request>?>(nil)
    private let taskExecutor: (any TaskExecutor)?

    /// - Parameters:
    ///   - endpoint: one gateway's pool, as libzmq takes it (`tcp://10.0.0.7:7421`).
    ///   - capacity: its part of the verifier's in-flight bound: the first share is taken when it
    ///     runs, and asked for again every heartbeat.
    ///   - taskExecutor: where the requests' tasks run (the verifier's curl
    ///     loop, whose client they mostly call); nil for the global executor.
    ///   - socketHost: the thread that serves the socket (the same curl loop:
    ///     a request then wakes that thread alone); nil for a thread of its own.
    ///   - handOff: tried on every answer before it is sent back.
    public convenience init(
        context: ZMQContext, endpoint: String, capacity: PoolCapacity, gatewayDeadAfter: Duration = .seconds(3),
        taskExecutor: (any TaskExecutor)? = nil, socketHost: (any DescriptorHost)? = nil, logger: Logger,
        handOff: HandOff? = nil, handler: @escaping Handler
    ) {
        self.init(
            context: context, endpoint: endpoint, capacity: capacity, gatewayDeadAfter: gatewayDeadAfter,
            heartbeatInterval: .seconds(1), sendHighWaterMark: nil, taskExecutor: taskExecutor,
            socketHost: socketHost, logger: logger, handOff: handOff, handler: handler)
    }

    /// For tests: beats other than the protocol's second, and a queue to the
    /// gateway shorter than libzmq's 1,000 messages (nil), to fill it quickly.
    init(
        context: ZMQContext, endpoint: String, capacity: PoolCapacity, gatewayDeadAfter: Duration,
        heartbeatInterval: Duration, sendHighWaterMark: Int?, taskExecutor: (any TaskExecutor)? = nil,
        socketHost: (any DescriptorHost)? = nil, logger: Logger, handOff: HandOff? = nil, handler: @escaping Handler
    ) {
        self.endpoint = endpoint
        self.handOff = handOff
        self.taskExecutor = taskExecutor
        self.socket = ZMQSocketLoop(context: context, type: .dealer, host: socketHost) { socket in
            if let sendHighWaterMark { try socket.setSendHighWaterMark(sendHighWaterMark) }
            try socket.setLinger(milliseconds: 1_000)
            try socket.setReconnect(intervalMilliseconds: 100, maximumMilliseconds: 2_000)
            if PoolEndpoint.isIPv6(endpoint) { try socket.setIPv6(true) }
            try socket.connect(endpoint)
        }
        self.capacity = capacity
        self.heartbeatInterval = heartbeatInterval
        self.handler = handler
        var logger = logger
        logger[metadataKey: "pool.endpoint"] = "\(endpoint)"
        self.logger = logger
        self.state = Mutex(PoolWorkerStateMachine(share: 0, gatewayDeadAfter: gatewayDeadAfter, now: .now))
        socket.handleEachMessage { [weak self] message in self?.take(message) }
    }

    /// Asks the worker to leave its pool and stop, as graceful shutdown does.
    public func leave() { leaveRequest.ask() }

    /// Whether the gateway has been silent past `gatewayDeadAfter` (diagnostics and tests).
    public var gatewayIsSilent: Bool { state.withLock { $0.gatewayIsSilent(now: .now) } }

    /// Heartbeats skipped because the queue to the gateway was full.
    var skippedHeartbeats: Int { skippedBeats.load(ordering: .relaxed) }

    public func run() async throws {
        defer { capacity.release() }
        let share = capacity.firstShare()
        state.withLock { $0 = PoolWorkerStateMachine(share: share, gatewayDeadAfter: $0.gatewayDeadAfter, now: .now) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.socket.run() }
            group.addTask {
                do {
                    try await self.heartbeatLoop()
                } catch let error as ZMQError {
                    // Nobody awaits this task: without its beats the gateway would count the worker
                    // dead while it went on idle. Stopping the socket ends the worker with it.
                    self.logger.error("pool heartbeat failed; the worker stops", metadata: ["error": "\(error)"])
                    self.socket.stop()
                    throw error
                }
            }
            // Requests run as children of a few lanes (thousands in one group cost a walk of the
            // group's list per completion); leaving waits for every one of them, or cancels them all.
            let perform: @Sendable (Request) async -> Void = {
                await self.serve(id: $0.id, frame: $0.frame)
            }
            do {
                // On the task executor, when given: the lanes' children inherit it.
                try await withTaskExecutorPreference(taskExecutor) {
                    try await self.takeRequests(share: share, perform: perform)
                }
            } catch is GatewayGone {
                // The lanes cancelled what the worker held: nobody waits for those answers.
            }
            group.cancelAll()
        }
    }

    /// Takes requests into lanes from just before the first READY until
    /// leaving is done; requests already taken still finish. The handler
    /// takes every message, so the socket's `receive` only ends, with
    /// `Closed`, when the socket stops (a failed heartbeat stops it): the
    /// worker stops with it.
    private func takeRequests(share: Int, perform: @escaping @Sendable (Request) async -> Void) async throws {
        try await withTaskLanes(count: Self.laneCount, perform: perform) { requests in
            intake.withLock { $0 = requests }
            defer { intake.withLock { $0 = nil } }
            try await socket.send(PoolFrame.ready(free: share, share: share))
            try await withThrowingTaskGroup(of: Void.self) { taking in
                taking.addTask { try await self.leaveWhenAsked() }
                taking.addTask { _ = try await self.socket.receive() }
                try await taking.next()
                taking.cancelAll()
            }
        }
    }

    /// On the socket's thread, each message from the gateway: a request goes
    /// straight to a lane (a receiving task cost a wake-up per request), and
    /// anything else shows the gateway alive. A request while the worker takes
    /// none (leaving is done) is dropped: the gateway sends it to another.
    private func take(_ message: [[UInt8]]) {
        guard let (command, body) = PoolFrame.decode(message), command == .request, body.count == 2 else {
            state.withLock { $0.heard(now: .now) }
            return
        }
        let submitted = intake.withLock { lanes -> Bool? in
            guard let lanes else { return nil }
            state.withLock { $0.took(now: .now) }
            return lanes.submit((id: body[0], frame: body[1]))
        }
        // Refused only when the worker is being cancelled: the request is dropped, as any in flight.
        if submitted == false { answered() }
    }

    /// Once asked to leave: with a live gateway, sends DISCONNECT, then
    /// returns once a second has passed and no request is in flight (requests
    /// the gateway sent before it saw DISCONNECT may still arrive meanwhile,
    /// and are served). With a silent one, disconnects and throws
    /// `GatewayGone`.
    private func leaveWhenAsked() async throws {
        try await leaveRequest.wait()
        let departure = state.withLock { $0.leave(now: .now) }
        capacity.leave()
        let inFlight = state.withLock { $0.inFlight }
        switch departure {
        case .dropAtOnce:
            logger.info("leaving the pool; its gateway is gone", metadata: ["pool.dropped": "\(inFlight)"])
            // Whatever is queued for the vanished gateway (heartbeats, replies) must not reach
            // whoever holds its address next: a restarted gateway would take a stale REPLY for a
            // request id of its own.
            do {
                try socket.disconnect(endpoint, discardingQueued: true)
            } catch {
                // The socket is closing anyway; its close drops the connection too.
                logger.debug("disconnect failed", metadata: ["error": "\(error)"])
            }
            throw GatewayGone()
        case .goodbye:
            logger.info("leaving the pool", metadata: ["pool.in_flight": "\(inFlight)"])
            try await socket.send(PoolFrame.encode(.disconnect))
            try await Task.sleep(for: .seconds(1))
            while !state.withLock({ $0.isIdle }) {
                await idle.wait(until: nil)
                try Task.checkCancellation()
            }
        }
    }

    /// Answers one request; `take` counted it in.
    private func serve(id: [UInt8], frame: [UInt8]) async {
        let reply: [UInt8]
        do {
            let request = try Envelope(frame: frame)
            reply = Self.reply(to: request, answer: await handler(request), id: id, handOff: handOff)
        } catch {
            reply = Envelope(
                requestID: "", body: .failure(ServiceFailure(.unsupportedContract, message: "\(error)"))
            ).frame()
        }
        try? await socket.send(PoolFrame.encode(.reply, [id, reply]))
        answered()
    }

    /// The REPLY's body: empty when `handOff` sent the answer elsewhere.
    @inline(never)
    private static func reply(to request: Envelope, answer: Envelope, id: [UInt8], handOff: HandOff?) -> [UInt8] {
        if let handOff, let requestID = PoolFrame.uint64(id), handOff(request, answer, requestID) { return [] }
        return answer.frame()
    }

    /// A request is done with (answered, or dropped); the last one rings `idle`.
    private func answered() {
        let idleNow = state.withLock { state in
            state.answered()
            return state.isIdle
        }
        if idleNow { idle.ring() }
    }

    /// Periodic, unlike the gateway's timer loop: the protocol needs it for as
    /// long as the worker is in its pool, whether or not a gateway is there.
    /// The gateway declares a worker dead after 3 silent seconds, and a worker
    /// cannot tell from its DEALER whether a gateway is connected: the beats
    /// (and READY again once the gateway has been silent, for a gateway
    /// restarted at the address) are how it finds one. Requests and leaving
    /// never wait on this loop.
    ///
    /// It never waits on the socket either. A DEALER whose gateway is not
    /// there (a refresh pool no ledger binds, a gateway down) queues its
    /// messages up to its high-water mark (1,000: over ten minutes of beats),
    /// and a send would then wait until the gateway came back: the usage
    /// reports would stop with it, and the worker would keep its last share
    /// of the verifier whatever the other pools needed. So a beat that cannot
    /// go at once is skipped (the messages queued ahead of it prove life as
    /// well), and so is a READY to a gateway silent past `gatewayDeadAfter`,
    /// which is announced again next beat. A READY to a gateway heard from
    /// waits its turn behind the replies queued before it: under load the
    /// queue may never be empty at a beat, and a READY tried only then would
    /// leave the gateway on its old credits for as long. Until a
    /// READY has gone, the usage reports say so while the gateway is heard
    /// from, and the split keeps counting the share the gateway last learnt
    /// of (`takeUsage` says why not after).
    private func heartbeatLoop() async throws {
        while true {
            try await Task.sleep(for: heartbeatInterval)
            if try !socket.trySend(PoolFrame.encode(.heartbeat)) { skippedBeats.add(1, ordering: .relaxed) }
            let share = capacity.share(reporting: state.withLock { $0.takeUsage(now: .now) })
            let (free, gatewayIsSilent) = state.withLock { ($0.tick(share: share, now: .now), $0.gatewayIsSilent(now: .now)) }
            guard let free else { continue }
            let ready = PoolFrame.ready(free: free, share: share)
            if !gatewayIsSilent {
                // A gateway heard from reads its queue: the READY goes behind the replies queued
                // before it. Skipped instead, it could miss every beat while replies stay queued.
                try await socket.send(ready)
            } else if try !socket.trySend(ready) {
                state.withLock { $0.announcementFailed() }
            }
        }
    }
}

/// Thrown by a leaving worker whose gateway is gone, to cancel what it holds.
struct GatewayGone: Error {}
