import Contracts
import Foundation
import LedgerClient
import Logging
import Synchronization
import Testing
import ZeroMQ
import ZeroMQTestSupport

@testable import Verifier

/// The verifier's side of `LedgerHandoff`: which answers go to a ledger
/// (a result with purchases, for a gateway on the same ledgers), and that
/// with no ledger connected the answer goes back through the pool instead.
@Suite(.timeLimit(.minutes(1))) struct LedgerHandoffSenderTests {
    static let ledgers: Set<String> = ["tcp://127.0.0.1:7422"]

    static func request(
        ledgers: [String] = Array(ledgers), handOff: Bool = true, deadlineMilliseconds: Int64 = 1_000
    ) -> Envelope {
        Envelope(
            requestID: "req-1", deadlineMilliseconds: deadlineMilliseconds,
            body: .verifyRequest(.with {
                $0.receiptData = "MIIT"
                if handOff {
                    $0.ledgerHandoff = .with {
                        $0.userID = "u-1"
                        $0.gatewayRoute = Data("gateway-a".utf8)
                        $0.recordDeadlineMs = 6_000
                        $0.ledgerEndpoints = ledgers
                    }
                }
            }))
    }

    static func result(purchases: Int = 1) -> Envelope {
        Envelope(
            requestID: "req-1",
            body: .verifyResult(.with {
                $0.bundleID = "com.example.app"
                $0.transactions = (0..<purchases).map { index in .with { $0.transactionID = "\(1000 + index)" } }
            }))
    }

    static func decide(_ request: Envelope, _ answer: Envelope, ledgers: Set<String> = ledgers, nowMs: Int64 = 500)
        -> LedgerHandoffSender.Decision
    {
        LedgerHandoffSender.decide(request, answer: answer, ledgers: ledgers, nowMs: nowMs)
    }

    @Test func aResultWithPurchasesBecomesTheRecordTheGatewayWouldHaveSent() throws {
        guard case .send(let route, let record) = Self.decide(Self.request(), Self.result()) else {
            Issue.record("not handed over")
            return
        }
        #expect(route == Array("gateway-a".utf8))
        #expect(record.requestID == "req-1")
        #expect(record.deadlineMs == 6_000, "the record's deadline, not the verification's")
        guard case .recordRequest(let request) = record.body, case .verifyResult(let result) = Self.result().body else {
            Issue.record("not a record")
            return
        }
        #expect(request.userID == "u-1")
        #expect(request.result == result)
        #expect(!request.hasIdempotency && !request.hasAnswerContext)
    }

    @Test func everythingElseGoesBackToTheGateway() {
        let failure = Envelope(requestID: "req-1", body: .failure(ServiceFailure(.receiptInvalid, message: "no")))
        #expect(Self.decide(Self.request(handOff: false), Self.result()) == .notAsked)
        #expect(Self.decide(Self.request(), failure) == .answer, "a failure")
        #expect(Self.decide(Self.request(), Self.result(purchases: 0)) == .answer, "no purchases: the gateway refuses it")
        #expect(
            Self.decide(Self.request(), Self.result(), nowMs: 1_000) == .answer,
            "past the verification's deadline the gateway may have answered already")
        #expect(Self.decide(Self.request(ledgers: ["tcp://10.0.0.9:7422"]), Self.result()) == .otherLedgers(["tcp://10.0.0.9:7422"]))
        #expect(Self.decide(Self.request(ledgers: []), Self.result()) == .otherLedgers([]), "a gateway naming no ledger")
        // The same ledgers in another order are the same ledgers; one named twice is not two.
        let two: Set<String> = ["tcp://a:1", "tcp://b:1"]
        guard case .send = Self.decide(Self.request(ledgers: ["tcp://b:1", "tcp://a:1"]), Self.result(), ledgers: two) else {
            Issue.record("the same ledgers in another order were refused")
            return
        }
        #expect(Self.decide(Self.request(ledgers: ["tcp://a:1", "tcp://a:1"]), Self.result(), ledgers: two) == .otherLedgers(["tcp://a:1", "tcp://a:1"]))
    }

    /// A ledger's ROUTER driven by hand: it answers probes as a ledger that
    /// takes hand-overs does (`notARecord`, to the route named), or drops
    /// everything, as a ledger older than hand-overs does.
    final class FakeLedger {
        let socket: ZMQSocket
        let answersProbes: Bool
        private(set) var probes = 0
        private(set) var records: [(route: [UInt8], correlation: UInt64, record: RecordRequest)] = []

        init(context: ZMQContext, endpoint: String, answersProbes: Bool) throws {
            socket = try ZMQSocket(context: context, type: .router)
            try socket.setLinger(milliseconds: 0)
            try socket.bind(endpoint)
            self.answersProbes = answersProbes
        }

        /// Takes what came within `limit`, answering probes.
        func serve(for limit: Duration) async throws {
            while let message = try await socket.receive(within: limit) {
                let (route, correlation, payload) = try #require(RequestFrame.decodeHandOff(message.dropFirst()))
                let envelope = try Envelope(frame: payload)
                guard case .recordRequest(let record) = envelope.body else {
                    probes += 1
                    #expect(route == message[0], "a probe names its own socket")
                    if answersProbes {
                        let failure = Envelope(
                            requestID: envelope.requestID, body: .failure(ServiceFailure(.internalError, message: "not a record")))
                        #expect(try socket.send([route] + RequestFrame.encodeHandedOverAnswer(correlation: correlation, payload: failure.frame())))
                    }
                    continue
                }
                records.append((route, correlation, record))
            }
        }
    }

    static func withSender(
        _ endpoints: [String], _ body: (LedgerHandoffSender, ZMQContext) async throws -> Void
    ) async throws {
        let context = ZMQContext()
        let sender = LedgerHandoffSender(context: context, endpoints: endpoints, logger: Logger(label: "test"))
        let running = Task { try await sender.run() }
        defer { running.cancel() }
        try await body(sender, context)
    }

    static func ipcEndpoints(_ count: Int) throws -> (endpoints: [String], directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sender-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return ((0..<count).map { "ipc://\(directory.path)/ledger-\($0)" }, directory)
    }

    /// Receipts arriving and answered until one is handed over, serving the
    /// ledgers between tries; true when one went.
    static func handOffOnce(
        _ sender: LedgerHandoffSender, _ request: Envelope, id: UInt64, serving ledgers: [FakeLedger]
    ) async throws -> Bool {
        for _ in 0..<1_000 {
            sender.prepare(request)  // as the request arrives: probes what is due
            if sender.handOff(request, answer: result(), requestID: id) { return true }
            for ledger in ledgers { try await ledger.serve(for: .milliseconds(5)) }
        }
        return false
    }

    @Test func aLedgerThatAnswersProbesIsHandedTheRecordAndOnceGoneNothing() async throws {
        let (endpoints, directory) = try Self.ipcEndpoints(1)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.withSender(endpoints) { sender, context in
            let request = Self.request(ledgers: endpoints, deadlineMilliseconds: 0)
            #expect(!sender.handOff(request, answer: Self.result(), requestID: 41), "no ledger yet")
            let ledger = try FakeLedger(context: context, endpoint: endpoints[0], answersProbes: true)
            #expect(try await Self.handOffOnce(sender, request, id: 42, serving: [ledger]), "sent once the ledger answered a probe")
            try await ledger.serve(for: .milliseconds(500))
            #expect(ledger.probes >= 1)
            let handed = try #require(ledger.records.first)
            #expect(ledger.records.count == 1)
            #expect(handed.route == Array("gateway-a".utf8))
            #expect(handed.correlation == 42)
            #expect(handed.record.userID == "u-1")

            // The ledger goes away: nothing is queued for it (it may never come back), the answer
            // goes back through the pool. A DEALER without ZMQ_IMMEDIATE would queue and say sent.
            ledger.socket.close()
            var refused = false
            for _ in 0..<2_000 where !refused {
                refused = !sender.handOff(request, answer: Self.result(), requestID: 43)
                if !refused { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(refused)
            // Asked by a gateway on other ledgers: never sent, counted apart.
            #expect(!sender.handOff(Self.request(deadlineMilliseconds: 0), answer: Self.result(), requestID: 44))
        }
    }

    @Test func aLedgerOlderThanHandOversIsProbedButNeverHandedARecord() async throws {
        let (endpoints, directory) = try Self.ipcEndpoints(2)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.withSender(endpoints) { sender, context in
            let old = try FakeLedger(context: context, endpoint: endpoints[0], answersProbes: false)
            let request = Self.request(ledgers: endpoints, deadlineMilliseconds: 0)
            // Alone, the old ledger hears probes (it is connected) and never a record.
            let started = HandoffLink.monotonicMs()
            for id in 0..<50 as Range<UInt64> {
                sender.prepare(request)
                #expect(!sender.handOff(request, answer: Self.result(), requestID: id))
                try await old.serve(for: .milliseconds(20))
            }
            let elapsedMs = HandoffLink.monotonicMs() - started
            #expect(old.probes >= 2, "probed again while unanswered")
            #expect(old.probes <= Int(elapsedMs / HandoffLink.probeSpacingMs) + 1, "spaced out, not one per receipt")
            #expect(!sender.anyLedgerVouchedFor)
            // Beside a ledger that takes hand-overs, every record goes to that one.
            let new = try FakeLedger(context: context, endpoint: endpoints[1], answersProbes: true)
            #expect(try await Self.handOffOnce(sender, request, id: 100, serving: [old, new]))
            for id in 101..<120 as Range<UInt64> {
                #expect(sender.handOff(request, answer: Self.result(), requestID: id))
            }
            try await new.serve(for: .milliseconds(500))
            try await old.serve(for: .milliseconds(100))
            #expect(new.records.map(\.correlation) == Array(100..<120))
            #expect(old.records.isEmpty)
            new.socket.close()
            old.socket.close()
        }
    }

    @Test func aProbeIsDueWithoutAVouchOrNearItsEndAndNeverTwiceWithinItsSpacing() {
        let clock = Mutex<Int64>(0)
        let link = HandoffLink(
            context: ZMQContext(), endpoint: "ipc:///nowhere", now: { clock.withLock { $0 } }, logger: Logger(label: "test"))
        #expect(!link.isVouchedFor(atMs: 0))
        #expect(link.probeIfDue(atMs: 0), "never vouched for: probe")
        #expect(!link.probeIfDue(atMs: HandoffLink.probeSpacingMs - 1), "spaced out")
        #expect(link.probeIfDue(atMs: HandoffLink.probeSpacingMs))
        link.vouch(atMs: 1_000)
        let end = 1_000 + HandoffLink.vouchMs
        #expect(link.isVouchedFor(atMs: 1_000) && link.isVouchedFor(atMs: end - 1))
        #expect(!link.isVouchedFor(atMs: end), "a vouch lapses")
        #expect(!link.probeIfDue(atMs: end - HandoffLink.renewWithinMs - 1), "vouched, and not near its end")
        #expect(link.probeIfDue(atMs: end - HandoffLink.renewWithinMs), "renewed before it lapses")
        #expect(!link.probeIfDue(atMs: end - HandoffLink.renewWithinMs + 1))
        clock.withLock { $0 = 5_000 }
        #expect(link.now() == 5_000, "the clock it was given")
    }
}
