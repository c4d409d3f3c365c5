import Contracts
import Foundation
import LedgerClient
import Logging
import Synchronization
import Testing
import ZeroMQ
import ZeroMQTestSupport

@testable import Ledger
@testable import Verifier

/// A record a verifier hands over (`LedgerHandoff`): the ledger records it
/// and answers the gateway the verifier named, with the outcome and what
/// its answer shows of the result, through that gateway's `EnvelopeClient`; anything but a record is
/// refused to the gateway without reaching the handler, and an answer for a
/// gateway not connected is dropped without harm.
@Suite(.timeLimit(.minutes(1))) struct EnvelopeServerHandOffTests {
    /// Answers each record with its user id, and counts what it took.
    final class Recorder: Sendable {
        let taken = Mutex<[Envelope]>([])

        func take(_ envelope: Envelope, reply: @escaping EnvelopeServer.Reply) -> EnvelopeServer.Work? {
            taken.withLock { $0.append(envelope) }
            guard case .recordRequest(let record) = envelope.body else {
                reply(Envelope(requestID: envelope.requestID, body: .failure(ServiceFailure(.internalError, message: "?"))))
                return nil
            }
            reply(Envelope(requestID: envelope.requestID, body: .recordOutcome(.with { $0.userID = record.userID })))
            return nil
        }
    }

    /// What the gateway's client was handed over: correlation ids and envelopes.
    final class HandedOver: Sendable {
        let answers = Mutex<[(UInt64, [UInt8])]>([])
    }

    static let result = VerifyResult.with {
        $0.environment = .sandbox
        $0.bundleID = "com.example.app"
        $0.appleStatus = 21007
        $0.style = .ios7
        $0.receiptSha256 = String(repeating: "ab", count: 32)
        $0.transactions = [.with { $0.transactionID = "1000" }]
    }

    static func handOff(to route: String, correlation: UInt64, body: Envelope.OneOf_Body) -> [[UInt8]] {
        RequestFrame.encodeHandOff(
            route: Array(route.utf8), correlation: correlation,
            payload: Envelope(requestID: "r-\(correlation)", body: body).frame())
    }

    static let record = Envelope.OneOf_Body.recordRequest(.with {
        $0.userID = "u-1"
        $0.result = result
    })

    /// A running server, a gateway's client named `gateway-a` that keeps
    /// what is handed over to it, and a verifier's bare DEALER.
    func withLedger(
        _ body: (Recorder, HandedOver, ZMQSocket, EnvelopeServer) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = "ipc://\(directory.path)/ledger"
        let context = ZMQContext()
        let recorder = Recorder()
        let server = EnvelopeServer(context: context, endpoint: endpoint, logger: Logger(label: "test"), handler: recorder.take)
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        let handedOver = HandedOver()
        let gateway = EnvelopeClient(
            context: context, endpoints: [endpoint], routingID: Array("gateway-a".utf8), logger: Logger(label: "test"),
            handedOverAnswers: { id, payload in handedOver.answers.withLock { $0.append((id, payload)) } })
        let asking = Task { try await gateway.run() }
        defer { asking.cancel() }
        // Connected (and so known to the ledger by its routing id) once a ping comes back.
        var connected = false
        for _ in 0..<100 where !connected { connected = await gateway.ping() }
        #expect(connected)
        let verifier = try ZMQSocket(context: context, type: .dealer)
        defer { verifier.close() }
        try verifier.setLinger(milliseconds: 0)
        try verifier.connect(endpoint)
        try await body(recorder, handedOver, verifier, server)
    }

    @Test func aHandedOverRecordIsAnsweredToTheGatewayNamedWithItsResult() async throws {
        try await withLedger { recorder, handedOver, verifier, _ in
            _ = try verifier.send(Self.handOff(to: "gateway-a", correlation: 42, body: Self.record))
            #expect(await eventually { handedOver.answers.withLock { !$0.isEmpty } })
            let (id, payload) = try #require(handedOver.answers.withLock { $0.first })
            #expect(id == 42, "the gateway's pool request id, as the verifier sent it")
            let answer = try Envelope(frame: payload)
            guard case .recordedReceipt(let recorded) = answer.body else {
                Issue.record("not a recorded receipt: \(answer.body.debugDescription)")
                return
            }
            #expect(answer.requestID == "r-42")
            #expect(recorded.outcome.userID == "u-1")
            // What the gateway's answer shows of the result it has not seen.
            #expect(recorded.context.environment == .sandbox)
            #expect(recorded.context.bundleID == "com.example.app")
            #expect(recorded.context.appleStatus == 21007)
            #expect(recorded.style == .ios7)
            #expect(recorded.receiptSha256 == Self.result.receiptSha256)
            #expect(recorder.taken.withLock { $0.count } == 1)
            #expect(try verifier.receive(dontWait: true) == nil, "nothing goes back to the verifier")
        }
    }

    @Test func onlyARecordMayBeHandedOver() async throws {
        try await withLedger { recorder, handedOver, verifier, _ in
            let query = Envelope.OneOf_Body.entitlementsQuery(.with { $0.userID = "u-1" })
            _ = try verifier.send(Self.handOff(to: "gateway-a", correlation: 7, body: query))
            #expect(await eventually { handedOver.answers.withLock { !$0.isEmpty } })
            let answer = try Envelope(frame: try #require(handedOver.answers.withLock { $0.first?.1 }))
            guard case .failure(let failure) = answer.body else {
                Issue.record("not refused")
                return
            }
            #expect(failure.failureCode == .internalError)
            #expect(recorder.taken.withLock { $0.isEmpty }, "the handler never saw it")
        }
    }

    @Test func aVerifiersProbeIsAnsweredToItsOwnSocketWithoutReachingTheHandler() async throws {
        try await withLedger { recorder, handedOver, _, server in
            // As HandoffLink probes: a hand-over holding no record, naming the probing socket itself.
            let context = ZMQContext()
            let probing = try ZMQSocket(context: context, type: .dealer)
            defer { probing.close() }
            try probing.setLinger(milliseconds: 0)
            try probing.setRoutingID(Array("verifier-probe".utf8))
            try probing.connect(try #require(server.endpoint))
            var answer: [[UInt8]]?
            for _ in 0..<100 where answer == nil {
                _ = try probing.send(
                    RequestFrame.encodeHandOff(route: Array("verifier-probe".utf8), correlation: 0, payload: HandoffLink.probe))
                answer = try await probing.receive(within: .milliseconds(100))
            }
            let frames = try #require(answer, "answered")
            let (correlation, payload) = try #require(RequestFrame.decodeHandedOverAnswer(frames))
            let refusal = try Envelope(frame: payload)
            #expect(correlation == 0 && refusal.requestID == HandoffLink.probeRequestID, "what HandoffLink takes as its answer")
            guard case .failure(let failure) = refusal.body else {
                Issue.record("a probe is refused as not a record")
                return
            }
            #expect(failure.message == EnvelopeServer.notARecord.message)
            #expect(recorder.taken.withLock { $0.isEmpty }, "the handler never saw it")
            #expect(handedOver.answers.withLock { $0.isEmpty }, "no gateway hears of it")
        }
    }

    @Test func anAnswerForAGatewayNotConnectedIsDroppedAndTheLedgerGoesOn() async throws {
        try await withLedger { recorder, handedOver, verifier, server in
            _ = try verifier.send(Self.handOff(to: "gateway-gone", correlation: 9, body: Self.record))
            #expect(await eventually { recorder.taken.withLock { $0.count } == 1 }, "recorded: a retry finds it")
            // Refused by libzmq (ROUTER_MANDATORY), counted and logged, not silently lost.
            #expect(await eventually { server.undeliveredAnswers == 1 })
            // The ledger still answers: its own request, and a record for the gateway connected.
            _ = try verifier.send(RequestFrame.encode(correlation: 3, payload: []))
            let pong = try #require(try await verifier.receive(within: .seconds(10)))
            #expect(RequestFrame.decode(pong)?.correlation == 3)
            _ = try verifier.send(Self.handOff(to: "gateway-a", correlation: 10, body: Self.record))
            #expect(await eventually { handedOver.answers.withLock { $0.map(\.0) } == [10] })
        }
    }

}
