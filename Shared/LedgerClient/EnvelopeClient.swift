import Contracts
import Foundation
import Logging
import RequestReply
import ServiceLifecycle
import Synchronization
import Timekeeping
import ZeroMQ

/// Request/reply to a ledger endpoint over a DEALER socket: many requests in
/// flight, matched to their answers by correlation id, each failing with
/// `Timeout` at its deadline. The ledger may restart underneath: the DEALER
/// reconnects, and what was lost times out (every ledger write is idempotent,
/// so the caller may retry).
public final class EnvelopeClient: Service, Sendable {
    public struct Timeout: Error, Equatable, CustomStringConvertible {
        public var description: String { "the ledger did not answer before the deadline" }
    }

    /// The waiting table and the expiry loop's alarm (`PendingRequests`); no payload: nothing is sent twice.
    typealias Requests = PendingRequests<CheckedContinuation<[UInt8], any Error>, Void>
    /// Takes, on the socket's thread, a ledger's answer to a record a verifier
    /// handed over (`RequestFrame.decodeHandedOverAnswer`): its correlation id
    /// and envelope. Such an answer is to a request of the verifier pool's.
    public typealias HandedOverAnswers = @Sendable (_ correlation: UInt64, _ payload: [UInt8]) -> Void

    public convenience init(context: ZMQContext, endpoint: String, clock: WallClock = .system, logger: Logger) {
        self.init(context: context, endpoints: [endpoint], clock: clock, logger: logger)
    }

    /// For an envelope without a deadline.
    public static let defaultTimeout: Duration = .seconds(10)

    private let socket: ZMQSocketLoop
    /// Reads envelope deadlines (milliseconds since the epoch).
    private let clock: WallClock
    private let requests = Mutex(Requests())
    /// Fails what waited past its deadline; sleeps until the next deadline, never while nothing waits.
    private let expiry = TimerLoop()
    private let handedOverAnswers: HandedOverAnswers?

    /// With several `endpoints` (ledgers sharing one PostgreSQL), requests go
    /// round-robin to the ledgers connected now: a dead ledger's connection is
    /// dropped (heartbeats find a silent one in 3 s) and what was in flight to it
    /// times out, to be retried by the caller.
    ///
    /// - Parameters:
    ///   - routingID: the socket's ZeroMQ identity, which a ledger needs to
    ///     answer this process for a verifier (`LedgerHandoff.gateway_route`);
    ///     nil for one libzmq makes up.
    ///   - handedOverAnswers: where the answers to such records go.
    public init(
        context: ZMQContext, endpoints: [String], routingID: [UInt8]? = nil, clock: WallClock = .system,
        logger: Logger, handedOverAnswers: HandedOverAnswers? = nil
    ) {
        precondition(!endpoints.isEmpty, "a ledger client needs an endpoint")
        self.clock = clock
        self.handedOverAnswers = handedOverAnswers
        socket = ZMQSocketLoop(context: context, type: .dealer, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            if let routingID { try socket.setRoutingID(routingID) }
            try socket.setSendHighWaterMark(100_000)
            try socket.setReceiveHighWaterMark(100_000)
            try socket.setReconnect(intervalMilliseconds: 100, maximumMilliseconds: 1_000)
            if endpoints.count > 1 {
                // Only to ledgers connected now: a request must not wait in the queue of one that is down.
                try socket.setImmediate(true)
                try socket.setHeartbeat(intervalMilliseconds: 1_000, timeoutMilliseconds: 3_000, ttlMilliseconds: 6_000)
            }
            for endpoint in endpoints { try socket.connect(endpoint) }
        }
        socket.handleEachMessage { [weak self] message in self?.deliver(message) }
    }

    public func run() async throws {
        defer { failWaiting() }
        try await runUntilGracefulShutdown { group in
            group.addTask { try await self.socket.run() }
            group.addTask { try await endingQuietlyOnCancellation { try await self.expiryLoop() } }
        }
    }

    /// The client stopped: whoever still waits hears so now, and later requests are refused.
    private func failWaiting() {
        for waiter in requests.withLock({ $0.stop() }) { waiter.resume(throwing: Timeout()) }
    }

    /// Sends `envelope` and waits for the answer until its deadline (or `defaultTimeout`).
    public func request(_ envelope: Envelope) async throws -> Envelope {
        let answer = try await exchange(envelope.frame(), deadline: deadline(of: envelope))
        return try Envelope(frame: answer)
    }

    /// True when the ledger answers a ping within `timeout`.
    public func ping(timeout: Duration = .seconds(1)) async -> Bool {
        (try? await exchange([], deadline: .now + timeout)) != nil
    }

    private func exchange(_ payload: [UInt8], deadline: ContinuousClock.Instant) async throws -> [UInt8] {
        let id = requests.withLock { $0.makeID() }
        return try await awaitReply(refusal: Timeout()) { continuation in
            let admission = requests.withLock { $0.wait(id, waiter: continuation, deadline: deadline, payload: ()) }
            guard case .waiting(let wakeTimer) = admission else { return admission }
            if wakeTimer { expiry.wake() }
            // Never waits: answers are matched by id, and what is lost times out.
            socket.post(RequestFrame.encode(correlation: id, payload: payload))
            return admission
        } withdraw: {
            self.requests.withLock { $0.cancel(id) }
        }
    }

    func deadline(of envelope: Envelope) -> ContinuousClock.Instant {
        guard envelope.deadlineMs > 0 else { return .now + Self.defaultTimeout }
        return .now + clock.remaining(until: envelope.deadlineMs)
    }

    /// On the socket's thread: an answer to its waiter, whose task decodes it.
    /// A receiving task cost a wake-up per answer.
    private func deliver(_ message: [[UInt8]]) {
        guard let (id, payload) = RequestFrame.decode(message) else {
            if let (id, payload) = RequestFrame.decodeHandedOverAnswer(message) { handedOverAnswers?(id, payload) }
            return
        }
        requests.withLock { $0.answered(id) }?.resume(returning: payload)
    }

    /// Fails what waited past its deadline, then sleeps until the next deadline
    /// (or until a request due sooner, or any request after none, wakes it).
    private func expiryLoop() async throws {
        try await expiry.run { now in
            let (expired, alarm) = requests.withLock { ($0.timerWoke(now: now), $0.timerSleeps()) }
            for entry in expired { entry.waiter.resume(throwing: Timeout()) }
            return alarm
        }
    }

    /// How many times the expiry loop woke so far.
    var expiryWakeups: Int { requests.withLock { $0.timerWakeups } }
}
