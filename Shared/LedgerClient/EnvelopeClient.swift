import Contracts
import Foundation
import Logging
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

    struct Waiting {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<[UInt8], any Error>
    }

    struct State: ~Copyable {
        var nextID: UInt64 = 0
        var waiting: [UInt64: Waiting] = [:]
        var stopped = false
        /// The expiry loop's sleep: until the earliest deadline waiting (`alarm`),
        /// or, with nothing waiting, until a request comes. A request due sooner
        /// than the alarm cancels it; nothing wakes an idle client.
        var alarm: ContinuousClock.Instant?
        var sleeper: Task<Void, Never>?
        /// How many times the expiry loop woke (tests: an idle client never does).
        var expiryWakeups = 0
    }

    public convenience init(context: ZMQContext, endpoint: String, clock: WallClock = .system, logger: Logger) {
        self.init(context: context, endpoints: [endpoint], clock: clock, logger: logger)
    }

    /// For an envelope without a deadline.
    public static let defaultTimeout: Duration = .seconds(10)

    private let socket: ZMQSocketLoop
    /// Reads envelope deadlines (milliseconds since the epoch).
    private let clock: WallClock
    private let state = Mutex(State())
    private let outgoing: AsyncStream<[[UInt8]]>
    private let outgoingContinuation: AsyncStream<[[UInt8]]>.Continuation

    /// With several `endpoints` (ledgers sharing one PostgreSQL), requests go
    /// round-robin to the ledgers connected now: a dead ledger's connection is
    /// dropped (heartbeats find a silent one in 3 s) and what was in flight to it
    /// times out, to be retried by the caller.
    public init(context: ZMQContext, endpoints: [String], clock: WallClock = .system, logger: Logger) {
        precondition(!endpoints.isEmpty, "a ledger client needs an endpoint")
        self.clock = clock
        socket = ZMQSocketLoop(context: context, type: .dealer, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
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
        (outgoing, outgoingContinuation) = AsyncStream.makeStream()
    }

    public func run() async throws {
        defer { failWaiting() }
        try await runUntilGracefulShutdown { group in
            group.addTask { try await self.socket.run() }
            group.addTask { try await endingQuietlyOnCancellation { try await self.receiveLoop() } }
            group.addTask { try await endingQuietlyOnCancellation { try await self.expiryLoop() } }
            group.addTask { await self.sendLoop() }
        }
    }

    /// The client stopped: whoever still waits hears so now.
    private func failWaiting() {
        let waiting = state.withLock { state in
            state.stopped = true
            defer { state.waiting = [:] }
            return state.waiting.values
        }
        for entry in waiting { entry.continuation.resume(throwing: Timeout()) }
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
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (accepted, sleeper) = state.withLock { state -> (Bool, Task<Void, Never>?) in
                    guard !state.stopped else { return (false, nil) }
                    state.waiting[id] = Waiting(deadline: deadline, continuation: continuation)
                    // Due before the expiry loop wakes (or it sleeps with nothing to wait for): wake it.
                    let dueSooner = state.alarm.map { deadline < $0 } ?? true
                    return (true, dueSooner ? state.sleeper : nil)
                }
                // Outside the lock: cancelling resumes the sleep's continuation.
                sleeper?.cancel()
                guard accepted else { return continuation.resume(throwing: Timeout()) }
                outgoingContinuation.yield(RequestFrame.encode(correlation: id, payload: payload))
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    func deadline(of envelope: Envelope) -> ContinuousClock.Instant {
        guard envelope.deadlineMs > 0 else { return .now + Self.defaultTimeout }
        return .now + clock.remaining(until: envelope.deadlineMs)
    }

    private func receiveLoop() async throws {
        while true {
            guard let (id, payload) = RequestFrame.decode(try await socket.receive()) else { continue }
            state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume(returning: payload)
        }
    }

    /// Fails what waited past its deadline, then sleeps until the next deadline
    /// (or until a request due sooner, or any request after none, wakes it).
    private func expiryLoop() async throws {
        while true {
            try Task.checkCancellation()
            let (expired, sleeper) = state.withLock { state in
                state.expiryWakeups += 1
                let now = ContinuousClock.now
                let ids = state.waiting.filter { $0.value.deadline <= now }.map(\.key)
                let expired = ids.compactMap { state.waiting.removeValue(forKey: $0) }
                let alarm = state.waiting.values.map(\.deadline).min()
                let sleeper = Task<Void, Never> { try? await Task.sleep(until: alarm ?? .now + Self.idleSleep, clock: .continuous) }
                (state.alarm, state.sleeper) = (alarm, sleeper)
                return (expired, sleeper)
            }
            for entry in expired { entry.continuation.resume(throwing: Timeout()) }
            await withTaskCancellationHandler { await sleeper.value } onCancel: { sleeper.cancel() }
        }
    }

    /// With nothing waiting the sleep has no deadline to end at; a request ends it.
    private static let idleSleep: Duration = .seconds(86_400)

    /// How many times the expiry loop woke so far.
    var expiryWakeups: Int { state.withLock { $0.expiryWakeups } }

    private func sendLoop() async {
        for await frames in outgoing {
            try? await socket.send(frames)
        }
    }
}
