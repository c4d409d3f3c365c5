import Contracts
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TaskLanes
import ZeroMQ

/// A verifier's end of the pool: a DEALER connected to a gateway's ROUTER.
/// It announces its capacity (READY), answers each request with a REPLY
/// (which returns the credit), and heartbeats every second. When it has not
/// heard the gateway for `gatewayDeadAfter` it announces itself again (the
/// gateway restarted or dropped it). On graceful shutdown it sends DISCONNECT,
/// finishes what it holds, then stops.
public final class PoolWorker: Service, Sendable {
    public typealias Handler = @Sendable (Envelope) async -> Envelope
    /// Task groups the requests in flight are spread over (see `TaskLanes`).
    static let laneCount = 32

    private let socket: ZMQSocketLoop
    private let capacity: Int
    private let handler: Handler
    private let logger: Logger
    private let gatewayDeadAfter: Duration
    private let inFlight = Mutex(0)
    private let lastHeard = Mutex(ContinuousClock.now)
    private let leaving = LeaveFlag()

    public init(
        context: ZMQContext, endpoint: String, capacity: Int, gatewayDeadAfter: Duration = .seconds(3),
        logger: Logger, handler: @escaping Handler
    ) {
        self.socket = ZMQSocketLoop(context: context, type: .dealer) { socket in
            try socket.setLinger(milliseconds: 1_000)
            try socket.setReconnect(intervalMilliseconds: 100, maximumMilliseconds: 2_000)
            try socket.connect(endpoint)
        }
        self.capacity = capacity
        self.handler = handler
        self.logger = logger
        self.gatewayDeadAfter = gatewayDeadAfter
    }

    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.socket.run() }
            try await socket.send(PoolFrame.encode(.ready, [PoolFrame.uint32(UInt32(capacity))]))
            group.addTask { try await self.heartbeatLoop() }
            // Requests run as children of a few lanes (thousands in one group cost a walk of the
            // group's list per completion); leaving waits for every one of them.
            let perform: @Sendable ((id: [UInt8], frame: [UInt8])) async -> Void = {
                await self.serve(id: $0.id, frame: $0.frame)
            }
            try await withTaskLanes(count: Self.laneCount, perform: perform) { requests in
                // Taking requests ends when leaving is done; requests already taken still finish.
                try await withThrowingTaskGroup(of: Void.self) { intake in
                    intake.addTask { try await self.takeRequests(into: requests) }
                    intake.addTask { try await self.leaveOnGracefulShutdown() }
                    try await intake.next()
                    intake.cancelAll()
                }
            }
            group.cancelAll()
        }
    }

    /// Takes requests off the socket until cancelled. No time-out: a receive
    /// racing a timer costs a timer, two child tasks and a thread switch per
    /// request when requests come one at a time.
    private func takeRequests(into requests: TaskLanes<(id: [UInt8], frame: [UInt8])>) async throws {
        while true {
            let message = try await socket.receive()
            lastHeard.withLock { $0 = .now }
            guard let (command, body) = PoolFrame.decode(message), command == .request, body.count == 2 else { continue }
            inFlight.withLock { $0 += 1 }
            // Refused only when the worker is being cancelled: the request is dropped, as any in flight.
            if !requests.submit((id: body[0], frame: body[1])) { inFlight.withLock { $0 -= 1 } }
        }
    }

    /// On graceful shutdown: sends DISCONNECT, then returns once a second has
    /// passed and no request is in flight. Requests the gateway sent before it
    /// saw DISCONNECT may still arrive meanwhile, and are served.
    private func leaveOnGracefulShutdown() async throws {
        try await gracefulShutdown()
        leaving.set()
        logger.info("leaving the pool", metadata: ["pool.in_flight": "\(inFlight.withLock { $0 })"])
        try await socket.send(PoolFrame.encode(.disconnect))
        try await Task.sleep(for: .seconds(1))
        while inFlight.withLock({ $0 > 0 }) {
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Answers one request; `inFlight` was counted up by the reader.
    private func serve(id: [UInt8], frame: [UInt8]) async {
        defer { inFlight.withLock { $0 -= 1 } }
        let answer: Envelope
        do {
            answer = await handler(try Envelope(frame: frame))
        } catch {
            answer = Envelope(
                requestID: "", body: .failure(ServiceFailure(.unsupportedContract, message: "\(error)")))
        }
        try? await socket.send(PoolFrame.encode(.reply, [id, answer.frame()]))
    }

    private func heartbeatLoop() async throws {
        while true {
            try await Task.sleep(for: .seconds(1))
            try await socket.send(PoolFrame.encode(.heartbeat))
            // A leaving worker must not offer itself again.
            if !leaving.isSet, ContinuousClock.now - lastHeard.withLock({ $0 }) > gatewayDeadAfter {
                // Paranoid Pirate: the gateway may have restarted and forgotten us; announce again.
                let free = max(0, capacity - inFlight.withLock { $0 })
                try await socket.send(PoolFrame.encode(.ready, [PoolFrame.uint32(UInt32(free))]))
                lastHeard.withLock { $0 = .now }
            }
        }
    }
}

/// Set once, when the worker starts leaving on graceful shutdown.
final class LeaveFlag: Sendable {
    private let flag = Atomic(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}
