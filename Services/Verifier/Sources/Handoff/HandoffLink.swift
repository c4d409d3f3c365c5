import Contracts
import LedgerClient
import Logging
import Synchronization
import Timekeeping
import ZeroMQ

/// The verifier's socket to one ledger for hand-overs, and whether that
/// ledger takes them. A ledger older than hand-overs drops them without a
/// word, and each receipt handed to it would wait for its record's deadline
/// and get 503. So a ledger is handed records only while it has answered a
/// probe lately: a hand-over frame that holds no record, which a ledger that
/// takes hand-overs answers (with `notARecord`) to the route it names, here
/// this socket's own routing id.
///
/// Probes follow traffic, not a timer: `wantsProbe` asks for one when the
/// ledger is not vouched for, or its vouch ends within a second, at most one
/// every `probeSpacingMs`. An idle verifier sends none; a busy one about one a
/// second per ledger.
final class HandoffLink: Sendable {
    /// How long a probe's answer vouches for its ledger. A ledger replaced by
    /// an old one within this time is handed records it drops.
    static let vouchMs: Int64 = 3_000
    /// A vouch this close to its end is renewed before it lapses.
    static let renewWithinMs: Int64 = 1_000
    /// The least time between two probes of one ledger.
    static let probeSpacingMs: Int64 = 250
    /// The request id of a probe; a probe's answer carries it.
    static let probeRequestID = "ledger-handoff-probe"

    let endpoint: String
    let socket: ZMQSocketLoop
    /// This socket's routing id, which probes name as the route to answer.
    let routingID: [UInt8]
    private let clock: WallClock
    private let vouchedUntilMs = Atomic<Int64>(0)
    private let lastProbeMs = Atomic<Int64>(.min / 2)

    init(context: ZMQContext, endpoint: String, clock: WallClock, logger: Logger) {
        let routingID = Array("verifier-".utf8) + (0..<16).map { _ in UInt8.random(in: 0...255) }
        self.endpoint = endpoint
        self.routingID = routingID
        self.clock = clock
        socket = ZMQSocketLoop(context: context, type: .dealer, logger: logger) { socket in
            try socket.setLinger(milliseconds: 0)
            // Only a connected ledger takes a message: a ledger that is down holds no result.
            try socket.setImmediate(true)
            try socket.setSendHighWaterMark(100_000)
            try socket.setRoutingID(routingID)
            try socket.setReconnect(intervalMilliseconds: 100, maximumMilliseconds: 1_000)
            // A ledger that died without closing its connection is found in 3 s, and skipped.
            try socket.setHeartbeat(intervalMilliseconds: 1_000, timeoutMilliseconds: 3_000, ttlMilliseconds: 6_000)
            try socket.connect(endpoint)
        }
        socket.handleEachMessage { [weak self] message in self?.heard(message) }
    }

    /// Whether the ledger answered a probe within the last `vouchMs`.
    func isVouchedFor(atMs now: Int64) -> Bool { now < vouchedUntilMs.load(ordering: .relaxed) }

    /// Sends `frames` now or not at all (libzmq's queue full, or the ledger not connected).
    func trySend(_ frames: [[UInt8]]) -> Bool { (try? socket.trySend(frames)) ?? false }

    /// Probes the ledger if its vouch is missing or about to end, and no probe went lately.
    func probeIfDue(atMs now: Int64) {
        guard now + Self.renewWithinMs >= vouchedUntilMs.load(ordering: .relaxed) else { return }
        let last = lastProbeMs.load(ordering: .relaxed)
        guard now - last >= Self.probeSpacingMs,
            lastProbeMs.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return }
        _ = trySend(RequestFrame.encodeHandOff(route: routingID, correlation: 0, payload: Self.probe))
    }

    /// Not a record: a ledger that takes hand-overs answers it `notARecord`,
    /// before any work; an old one drops it as it drops every hand-over.
    static let probe = Envelope(requestID: probeRequestID, body: .failure(ServiceFailure(.badRequest, message: "probe")))
        .frame()

    /// On the socket's thread: only a ledger that takes hand-overs sends
    /// anything here, and only to answer a probe.
    private func heard(_ message: [[UInt8]]) {
        guard RequestFrame.decodeHandedOverAnswer(message) != nil else { return }
        vouchedUntilMs.store(clock.now() + Self.vouchMs, ordering: .relaxed)
    }
}
