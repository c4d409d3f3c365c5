import AppleFormats
import Contracts
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// A verifier asked for a transaction by id (POST /v1/transactions with a
/// transaction_id), against the simulator over HTTP: the same result as the
/// purchase's JWS, the sandbox after production's 4040010, and each failure
/// as the client hears it.
@Suite("The verifier's transaction id requests, against the simulator")
struct TransactionIDRequestTests {
    static func byID(_ id: String) -> Envelope.OneOf_Body { .transactionIDRequest(.with { $0.transactionID = id }) }

    @Test func anIDGivesWhatItsJWSGivesFoundAtSandboxAfterProduction() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy()
            let jws = try #require(harness.simulator.signedTransaction(bought.transactionID))
            let handler = try harness.handler()
            let fetched = await ServerAPIHarness.ask(handler, Self.byID(bought.transactionID))
            let signed = await ServerAPIHarness.ask(handler, .signedTransactionRequest(.with { $0.signedTransaction = jws }))
            guard case .verifyResult(let byID) = fetched, case .verifyResult(let byJWS) = signed else {
                Issue.record("no result: \(String(describing: fetched)), \(String(describing: signed))")
                return
            }
            #expect(byID.environment == .sandbox)
            #expect(byID.style == .signedTransaction && byJWS.style == .signedTransaction)
            #expect(byID.bundleID == byJWS.bundleID)
            #expect(byID.transactions == byJWS.transactions, "the ledger's keys and fields, whichever way it came")
            #expect(byID.transactions.map(\.transactionID) == [bought.transactionID])
            #expect(
                harness.paths == [
                    "/production/inApps/v1/transactions/\(bought.transactionID)",
                    "/sandbox/inApps/v1/transactions/\(bought.transactionID)",
                ])
        }
    }

    @Test func aProductionPurchaseIsAskedOfProductionOnly() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production)
            guard case .verifyResult(let result) = await ServerAPIHarness.ask(try harness.handler(), Self.byID(bought.transactionID))
            else {
                Issue.record("no result")
                return
            }
            #expect(result.environment == .production)
            #expect(result.transactions.first?.kind == .nonConsumable)
            #expect(harness.paths == ["/production/inApps/v1/transactions/\(bought.transactionID)"])
        }
    }

    @Test func anIDNeitherEnvironmentKnowsIsReceiptInvalid() async throws {
        try await ServerAPIHarness.with { harness in
            let answer = await ServerAPIHarness.ask(try harness.handler(), Self.byID("1999999999999999"))
            #expect(answer == .failure(ServiceFailure(.receiptInvalid, message: "Apple knows no such transaction")))
            #expect(harness.paths.count == 2)
        }
    }

    @Test func withoutCredentialsAnIDIsABadRequestAndAppleIsNotAsked() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy()
            let answer = await ServerAPIHarness.ask(try harness.handler(serverAPI: false), Self.byID(bought.transactionID))
            #expect(answer == .failure(VerifyRequestHandler.noServerAPI))
            #expect(VerifyRequestHandler.noServerAPI.failureCode == .badRequest)
            #expect(harness.paths.isEmpty)
        }
    }

    @Test func refusedCredentialsAre502AndLoggedAsAnError() async throws {
        try await ServerAPIHarness.with { harness in
            harness.faults(.production, ServerAPIFaultPlan(next: [.unauthorized]))
            let answer = await ServerAPIHarness.ask(try harness.handler(), Self.byID("2000000000000001"))
            guard case .failure(let failure) = answer else {
                Issue.record("no failure")
                return
            }
            #expect(failure.failureCode == .appleRejectedRequest)
            #expect(!failure.retryable)
            #expect(harness.logged(.error).contains { $0.contains("refused the App Store Server API credentials") })
        }
    }

    @Test func applesTroubleUntilTheDeadlineIsRetryable() async throws {
        try await ServerAPIHarness.with { harness in
            harness.faults(.production, ServerAPIFaultPlan(always: .unavailable))
            // The envelope's deadline bounds the verifier's retries; 6 s leaves room for a second
            // attempt even when a loaded machine makes the first one slow.
            let deadline = Int64(Date().timeIntervalSince1970 * 1_000) + 6_000
            let answer = await ServerAPIHarness.ask(try harness.handler(), Self.byID("2000000000000001"), deadlineMs: deadline)
            guard case .failure(let failure) = answer else {
                Issue.record("no failure")
                return
            }
            #expect(failure.failureCode == .appleUnavailable)
            #expect(failure.retryable && failure.retryAfterMs > 0)
            #expect(harness.paths.count >= 2, "retried before giving up")
        }
    }
}
