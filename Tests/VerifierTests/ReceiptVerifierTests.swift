import CallGates
import Contracts
import CurlHTTP
import Foundation
import Logging
import Synchronization
import Testing

@testable import StorekeeperCore
@testable import Verifier

/// The verifier against a scripted Apple (no network): what it sends and what it makes of the answers.
@Suite struct ReceiptVerifierTests {
    final class ScriptedApple: Sendable {
        let calls = Mutex<[(url: String, body: String)]>([])
        let answer: @Sendable (String) -> HTTPResponse
        /// Gated: every call waits in it until `open()`.
        private let gate: CallGate

        init(gated: Bool = false, answer: @escaping @Sendable (String) -> HTTPResponse) {
            self.answer = answer
            gate = CallGate(holding: gated ? .max : 0)
        }

        func open() { gate.open() }

        func transport(_ request: CurlHTTP.HTTPRequest) async throws(HTTPClientError) -> HTTPResponse {
            calls.withLock { $0.append((request.url, String(decoding: request.body, as: UTF8.self))) }
            await gate.pass()
            return answer(request.url)
        }
    }

    static func json(_ text: String) -> HTTPResponse { HTTPResponse(status: 200, body: Array(text.utf8)) }

    func makeVerifier(_ apple: ScriptedApple, environment: [String: String] = [:]) throws -> ReceiptVerifier {
        let settings = try AppleSettings(reader: EnvironmentReader([
            "STOREKEEPER_APPLE_PRODUCTION_URL": "http://127.0.0.1:1/production",
            "STOREKEEPER_APPLE_SANDBOX_URL": "http://127.0.0.1:1/sandbox",
            "STOREKEEPER_APPLE_SHARED_SECRET": "shared-secret-42",
        ].merging(environment) { $1 }))
        return ReceiptVerifier(
            settings: settings, backoff: Backoff(base: .milliseconds(1), cap: .milliseconds(5)),
            logger: Logger(label: "test"), transport: apple.transport)
    }

    func request(_ receipt: String = "cmVjZWlwdA==") -> VerifyRequest {
        var request = VerifyRequest()
        request.receiptData = receipt
        return request
    }

    static let validSandboxAnswer = #"{"status":0,"environment":"Sandbox","receipt":{"bundle_id":"com.example.app","in_app":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1"}]}}"#

    @Test func sendsTheSecretAsPasswordAndFallsBackToSandbox() async throws {
        let apple = ScriptedApple { url in
            url.hasSuffix("/production") ? Self.json(#"{"status":21007}"#) : Self.json(Self.validSandboxAnswer)
        }
        let verifier = try makeVerifier(apple)
        let result = try await verifier.verify(request(), deadline: .now + .seconds(5), requestID: "r").get()
        #expect(result.environment == .sandbox)
        #expect(result.transactions.count == 1)
        let calls = apple.calls.withLock { $0 }
        #expect(calls.map(\.url) == ["http://127.0.0.1:1/production", "http://127.0.0.1:1/sandbox"])
        #expect(calls.allSatisfy { $0.body.contains(#""password":"shared-secret-42""#) })
        #expect(calls.allSatisfy { $0.body.contains(#""receipt-data":"cmVjZWlwdA==""#) })
        #expect(calls.allSatisfy { !$0.body.contains("exclude-old-transactions") })
    }

    @Test func withSandboxRefusedA21007EndsWithoutAskingTheSandbox() async throws {
        let apple = ScriptedApple { url in
            url.hasSuffix("/production") ? Self.json(#"{"status":21007}"#) : Self.json(Self.validSandboxAnswer)
        }
        let verifier = try makeVerifier(apple, environment: ["STOREKEEPER_ACCEPT_SANDBOX": "false"])
        let result = await verifier.verify(request(), deadline: .now + .seconds(5), requestID: "r")
        #expect(result == .failure(.sandboxNotAccepted))
        #expect(apple.calls.withLock { $0.map(\.url) } == ["http://127.0.0.1:1/production"])
        #expect(VerifyFailure.sandboxNotAccepted.serviceFailure.code == "sandbox_not_accepted")
    }

    @Test func excludeOldTransactionsIsSentOnlyWhenAsked() async throws {
        let apple = ScriptedApple { _ in Self.json(Self.validSandboxAnswer) }
        let verifier = try makeVerifier(apple)
        var asked = request("b3RoZXI=")
        asked.excludeOldTransactions = true
        _ = await verifier.verify(asked, deadline: .now + .seconds(5), requestID: "r")
        #expect(apple.calls.withLock { $0.first?.body.contains(#""exclude-old-transactions":true"#) } == true)
    }

    @Test func aReceiptOfAnotherBundleIsRefusedWhateverAppleSaid() async throws {
        let apple = ScriptedApple { _ in Self.json(Self.validSandboxAnswer) }
        let verifier = try makeVerifier(apple, environment: ["STOREKEEPER_BUNDLE_IDS": "com.example.other"])
        let result = await verifier.verify(request(), deadline: .now + .seconds(5), requestID: "r")
        #expect(result == .failure(.bundleMismatch(bundleID: "com.example.app")))
    }

    @Test func identicalConcurrentRequestsShareOneAppleCall() async throws {
        let apple = ScriptedApple(gated: true) { _ in Self.json(Self.validSandboxAnswer) }
        let verifier = try makeVerifier(apple)
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    (try? await verifier.verify(self.request(), deadline: .now + .seconds(60), requestID: "r").get()) != nil
                }
            }
            // Apple answers only once every caller is either calling it or waiting for
            // another's call: no caller can come late and find the call over.
            // Bounded, and sleeping: a spin would hold a thread the other suites' tasks need.
            for _ in 0..<10_000 where apple.calls.withLock({ $0.count }) + verifier.coalescedCallers < 10 {
                try? await Task.sleep(for: .milliseconds(1))
            }
            apple.open()
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 10))
        #expect(apple.calls.withLock { $0.count } == 1)
    }

    @Test func differentReceiptsAtOnceEachGetTheirOwnAppleCall() async throws {
        let apple = ScriptedApple(gated: true) { _ in Self.json(Self.validSandboxAnswer) }
        let verifier = try makeVerifier(apple)
        let receipts = ["cmVjZWlwdA==", "b3RoZXI=", "dGhpcmQ="]
        let results = await withTaskGroup(of: Bool.self) { group in
            for receipt in receipts {
                group.addTask {
                    (try? await verifier.verify(self.request(receipt), deadline: .now + .seconds(60), requestID: "r").get()) != nil
                }
            }
            // Every caller is calling Apple or waiting for another's call before Apple answers (bounded).
            let deadline = ContinuousClock.now + .seconds(10)
            while apple.calls.withLock({ $0.count }) + verifier.coalescedCallers < receipts.count, .now < deadline {
                try? await Task.sleep(for: .milliseconds(1))
            }
            apple.open()
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [true, true, true])
        #expect(apple.calls.withLock { $0.count } == receipts.count)
    }

    @Test func serverErrorsUntilTheDeadlineEndAsUnavailable() async throws {
        let apple = ScriptedApple { _ in HTTPResponse(status: 503, headers: [("Retry-After", "1")], body: []) }
        let verifier = try makeVerifier(apple)
        let result = await verifier.verify(request(), deadline: .now + .milliseconds(800), requestID: "r")
        guard case .failure(.appleUnavailable(_, let retryAfter)) = result else {
            Issue.record("expected unavailable, got \(result)")
            return
        }
        #expect(retryAfter >= .seconds(1))
        #expect(apple.calls.withLock { $0.count } >= 1)
    }

    @Test func theFailureTellsTheClientToRetry() {
        let failure = VerifyFailure.appleUnavailable(appleStatus: 21005, retryAfter: .seconds(2)).serviceFailure
        #expect(failure.code == "apple_unavailable")
        #expect(failure.retryable)
        #expect(failure.retryAfterMs == 2_000)
        #expect(failure.appleStatus == 21005)
        let invalid = VerifyFailure.receiptInvalid(appleStatus: 21003).serviceFailure
        #expect(invalid.code == "receipt_invalid")
        #expect(!invalid.retryable)
    }
}
