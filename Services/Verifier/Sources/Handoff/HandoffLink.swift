import Contracts
import LedgerClient
import Logging
import Synchronization
import Timekeeping
import ZeroMQ

/// The verifier's socket to one ledger for hand-overs, and whether that
/// ledger takes them. A ledger older than hand-overs drops them (logging a
/// warning for each), and each receipt handed to it would wait for its
/// record's deadline and get 503. So a ledger is handed records only while a
/// probe's answer vouches for it: a probe is a hand-over frame that holds no
/// record, which a ledger that takes hand-overs answers (with `notARecord`)
/// to the route it names, here this socket's own routing id.
///
/// Probes follow traffic, not a timer: `probeIfDue`, called as a request
/// that asks for a hand-over arrives, sends one when the ledger is not
/// vouched for or its vouch ends within `renewWithinMs`, at most one every
/// `probeSpacingMs`. Its answer (well under a millisecond) is back long
/// before Apple's. An idle verifier sends none; a busy one one every 5 s or
/// so per ledger. Times here are monotonic: a step of the wall clock neither
/// stretches a vouch nor holds back probes.
final class HandoffLink: Sendable {
    /// How long a probe's answer vouches for its ledger: longer than a
    /// verification takes, so a receipt that probed as it arrived finds the
    /// vouch when it is answered. A ledger replaced by an older one at the
    /// same endpoint within this time is handed records it drops.
    static let vouchMs: Int64 = 10_000
    /// A vouch this close to its end is renewed before it lapses.
    static let renewWithinMs: Int64 = 5_000
    /// The least time between two probes of one ledger.
    static let probeSpacingMs: Int64 = 250
    /// The request id of a probe, which its answer carries (with correlation id 0).
    static let probeRequestID = "ledger-handoff-probe"

    let socket: ZMQSocketLoop
    /// This socket's routing id, which probes name as the route to answer.
    let routingID: [UInt8]
    /// Monotonic milliseconds.
    let now: @Sendable () -> Int64
    private let vouchedUntilMs = Atomic<Int64>(.min)
    private let lastProbeMs = Atomic<Int64>(.min / 2)

    init(context: ZMQContext, endpoint: String, now: @escaping @Sendable () -> Int64 = HandoffLink.monotonicMs, logger: Logger) {
        let routingID = Array("verifier-".utf8) + (0..<16).map { _ in UInt8.random(in: 0...255) }
        self.routingID = routingID
        self.now = now
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

    static func monotonicMs() -> Int64 { (ContinuousClock.now - origin).milliseconds }

    private static let origin = ContinuousClock.now

    /// Whether a probe's answer vouches for the ledger at `now`.
    func isVouchedFor(atMs now: Int64) -> Bool { now < vouchedUntilMs.load(ordering: .relaxed) }

    /// Sends `frames` now or not at all (libzmq's queue full, or the ledger not connected).
    func trySend(_ frames: [[UInt8]]) -> Bool { (try? socket.trySend(frames)) ?? false }

    /// Probes the ledger if its vouch is missing or about to end, and no
    /// probe went lately; true when a probe was due (sent, or refused by a
    /// ledger not connected).
    @discardableResult
    func probeIfDue(atMs now: Int64) -> Bool {
        guard now + Self.renewWithinMs >= vouchedUntilMs.load(ordering: .relaxed) else { return false }
        let last = lastProbeMs.load(ordering: .relaxed)
        guard now - last >= Self.probeSpacingMs,
            lastProbeMs.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return false }
        _ = trySend(RequestFrame.encodeHandOff(route: routingID, correlation: 0, payload: Self.probe))
        return true
    }

    /// A probe's answer came at `now`.
    func vouch(atMs now: Int64) {
        vouchedUntilMs.store(now + Self.vouchMs, ordering: .relaxed)
    }

    /// Not a record: a ledger that takes hand-overs answers it `notARecord`,
    /// before any work; an old one drops it as it drops every hand-over.
    static let probe = Envelope(requestID: probeRequestID, body: .failure(ServiceFailure(.badRequest, message: "probe")))
        .frame()

    /// On the socket's thread: only a ledger that takes hand-overs sends
    /// anything here, and only to answer a probe.
    private func heard(_ message: [[UInt8]]) {
        guard let (correlation, payload) = RequestFrame.decodeHandedOverAnswer(message), correlation == 0,
            (try? Envelope(frame: payload))?.requestID == Self.probeRequestID
        else { return }
        vouch(atMs: now())
    }
}
