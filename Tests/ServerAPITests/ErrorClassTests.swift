import AppleFormats
import Contracts
import Crypto
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// Each class of Apple's trouble, injected by the simulator: what is retried
/// (and within what), what fails at once, and what a failed check does.
@Suite("Server API against the simulator: error classes")
struct ErrorClassTests {
    @Test func a429IsRetriedAfterItsRetryAfter() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            harness.faults(.production, ServerAPIFaultPlan(next: [.rateLimited], retryAfterSeconds: 1))
            let started = ContinuousClock.now
            let result = try await harness.client().transactionInfo(bought.transactionID)
            #expect(result.transactions.first?.transactionID == bought.transactionID)
            #expect(ContinuousClock.now - started >= .seconds(1), "Retry-After: 1 was honoured")
            #expect(harness.paths.count == 2)
        }
    }

    @Test func a429ThatOutlastsTheDeadlineIsUnavailableAndRetryable() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            harness.faults(.production, ServerAPIFaultPlan(always: .rateLimited, retryAfterSeconds: 1))
            let started = ContinuousClock.now
            let error = await #expect(throws: ServerAPIError.self) {
                try await harness.client(deadline: .milliseconds(2_500)).transactionInfo(bought.transactionID)
            }
            #expect(error?.isRetryable == true)
            #expect(error?.httpStatus == 429)
            #expect(error?.serviceFailure.failureCode == .appleUnavailable)
            #expect(error?.serviceFailure.retryable == true)
            // A retry a second apart while one fits before the deadline (how many depends on this machine's load).
            #expect((1...3).contains(harness.paths.count), "\(harness.paths)")
            #expect(ContinuousClock.now - started < .seconds(10), "the call's deadline ended it, not the default 30 s")
        }
    }

    @Test(arguments: [ServerAPIFaultPlan.Fault.internalError, .unavailable])
    func a5xxIsRetried(_ fault: ServerAPIFaultPlan.Fault) async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            harness.faults(.production, ServerAPIFaultPlan(next: [fault, fault]))
            let statuses = try await harness.client().subscriptionStatuses(bought.transactionID)
            #expect(statuses.subscriptions.count == 1)
            #expect(harness.paths.count == 3)
        }
    }

    @Test func a5xxUntilTheDeadlineIsUnavailable() async throws {
        try await ServerAPIHarness.with { harness in
            harness.faults(.production, ServerAPIFaultPlan(always: .unavailable))
            let error = await #expect(throws: ServerAPIError.self) {
                try await harness.client(deadline: .seconds(2)).lookUpOrder("SIM1")
            }
            #expect(error?.isRetryable == true)
            #expect(error?.serviceFailure.failureCode == .appleUnavailable)
            #expect(harness.paths.count > 1, "retried while the deadline allowed")
            #expect(harness.logged(.error).isEmpty, "Apple's trouble is not Storekeeper's error")
        }
    }

    @Test func aHungCallEndsAtTheAttemptTimeOutAndIsRetried() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            harness.faults(.production, ServerAPIFaultPlan(next: [.hang]))
            let started = ContinuousClock.now
            let result = try await harness.client(attemptTimeout: .seconds(1), deadline: .seconds(30))
                .transactionInfo(bought.transactionID)
            #expect(result.environment == .production)
            #expect(ContinuousClock.now - started >= .seconds(1), "the hung call was waited for until its time-out")
            #expect(harness.paths.count >= 2)
        }
    }

    @Test func a401IsAConfigurationErrorAndNeverRetried() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            harness.faults(.production, ServerAPIFaultPlan(next: [.unauthorized, .unauthorized]))
            await #expect(throws: ServerAPIError.unauthorized) {
                try await harness.client().transactionInfo(bought.transactionID)
            }
            #expect(harness.paths.count == 1)
            #expect(harness.logged(.error).contains { $0.contains("refused the App Store Server API credentials") })
            #expect(ServerAPIError.unauthorized.serviceFailure.failureCode == .appleRejectedRequest, "502 for clients")
            #expect(ServerAPIError.unauthorized.serviceFailure.retryable == false)
        }
    }

    @Test func aTokenOfAnotherKeyIsRefused() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            let stranger = ServerAPISigningKey(key: P256.Signing.PrivateKey())
            await #expect(throws: ServerAPIError.unauthorized) {
                try await harness.client(key: stranger).transactionInfo(bought.transactionID)
            }
        }
    }

    @Test func anAnswerSignedByAnUntrustedChainIsRefusedAndNothingOfItReturned() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            let error = await #expect(throws: ServerAPIError.self) {
                try await harness.client(trustSimulator: false).transactionInfo(bought.transactionID)
            }
            #expect(error?.description == "server_api_answer_invalid")
            #expect(error?.serviceFailure.failureCode == .signatureInvalid)
            #expect(harness.logged(.error).contains { $0.contains("failed its checks") })
        }
    }

    @Test func productionDataOfAnotherAppleIDIsRefused() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            let error = await #expect(throws: ServerAPIError.self) {
                try await harness.client(appAppleID: 42).transactionHistory(bought.transactionID)
            }
            #expect(error?.description == "server_api_answer_invalid")
            #expect(error?.serviceFailure.failureCode == .bundleMismatch)
            // Sandbox answers carry no Apple ID, as Apple's for an app not yet released: nothing to compare.
            let sandbox = try harness.buy()
            #expect(try await harness.client(appAppleID: 42).transactionHistory(sandbox.transactionID).transactions.count == 1)
        }
    }
}
