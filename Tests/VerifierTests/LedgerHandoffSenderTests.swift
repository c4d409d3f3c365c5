import Contracts
import Foundation
import LedgerClient
import Logging
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

    @Test func withNoLedgerConnectedTheAnswerGoesBackAndWithOneItGoesThere() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sender-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = "ipc://\(directory.path)/ledger"
        let context = ZMQContext()
        let sender = LedgerHandoffSender(context: context, endpoints: [endpoint], logger: Logger(label: "test"))
        let running = Task { try await sender.run() }
        defer { running.cancel() }
        let request = Self.request(ledgers: [endpoint], deadlineMilliseconds: 0)
        let ledger = try ZMQSocket(context: context, type: .router)
        try ledger.setLinger(milliseconds: 0)
        try ledger.bind(endpoint)
        var sent = false
        for _ in 0..<2_000 where !sent {
            sent = sender.handOff(request, answer: Self.result(), requestID: 42)
            if !sent { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(sent, "sent once the ledger is connected")
        let message = try #require(try await ledger.receive(within: .seconds(10)))
        let (route, correlation, payload) = try #require(RequestFrame.decodeHandOff(message.dropFirst()))
        #expect(route == Array("gateway-a".utf8))
        #expect(correlation == 42)
        guard case .recordRequest(let record) = try Envelope(frame: payload).body else {
            Issue.record("not a record")
            return
        }
        #expect(record.userID == "u-1")

        // The ledger goes away: nothing is queued for it (it may never come back), the answer
        // goes back through the pool. A DEALER without ZMQ_IMMEDIATE would queue and say sent.
        ledger.close()
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
