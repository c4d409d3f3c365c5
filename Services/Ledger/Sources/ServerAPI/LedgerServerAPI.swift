import Contracts
import Foundation
import Logging
import Synchronization
import VerifierPool

/// The ledger's App Store Server API: requests to its verifier pool (the
/// refresh endpoint), which holds the key and calls Apple. Tracks whether
/// the verifiers have a key (`ServerAPIAvailability`) from their answers.
final class LedgerServerAPI: Sendable {
    /// How a request went.
    enum Answer<Value: Sendable>: Sendable {
        case answered(Value)
        /// The verifier has no App Store Server API key.
        case unconfigured
        /// Apple, the verifier or the pool failed: `code` is the failure's stable code.
        case failed(code: String, retryable: Bool)
    }

    /// One pool request's budget, Apple's retries and every page included.
    static let deadlineMs: Int64 = 60_000

    let pool: VerifierPoolClient
    private let availability = Mutex(ServerAPIAvailability())
    private let clock: @Sendable () -> Int64

    init(pool: VerifierPoolClient, clock: @escaping @Sendable () -> Int64) {
        self.pool = pool
        self.clock = clock
    }

    /// Some verifier is connected to the pool.
    var hasVerifiers: Bool { pool.workerCount > 0 }

    /// Unless a verifier said lately that it has no key.
    var shouldAsk: Bool { availability.withLock { $0.shouldAsk(at: clock()) } }

    /// Get All Subscription Statuses of the subscription's customer, in its environment.
    func subscriptionStatus(_ key: SubscriptionKey, requestID: String) async -> Answer<VerifyResult> {
        let request = SubscriptionStatusRequest.with {
            $0.originalTransactionID = key.originalTransactionID
            $0.environment = key.environment
        }
        return await ask(.subscriptionStatusRequest(request), requestID: requestID) {
            guard case .verifyResult(let result) = $0 else { return nil }
            return result
        }
    }

    /// Get Notification History of one environment between two times (ms).
    func notificationHistory(
        _ environment: AppleEnvironment, from start: Int64, to end: Int64, requestID: String
    ) async -> Answer<[NotificationApply]> {
        let request = NotificationHistoryQuery.with {
            $0.environment = environment
            $0.startMs = start
            $0.endMs = end
        }
        return await ask(.notificationHistoryQuery(request), requestID: requestID) {
            guard case .notificationHistoryPage(let page) = $0 else { return nil }
            return page.notifications
        }
    }

    /// Send Consumption Information.
    func sendConsumption(_ request: ConsumptionInfoRequest, requestID: String) async -> Answer<AppleEnvironment> {
        await ask(.consumptionInfoRequest(request), requestID: requestID) {
            guard case .consumptionInfoSent(let sent) = $0 else { return nil }
            return sent.environment
        }
    }

    private func ask<Value: Sendable>(
        _ body: Envelope.OneOf_Body, requestID: String, read: (Envelope.OneOf_Body?) -> Value?
    ) async -> Answer<Value> {
        let envelope = Envelope(requestID: requestID, deadlineMilliseconds: clock() + Self.deadlineMs, body: body)
        let answer: Envelope
        do {
            answer = try await pool.verify(envelope)
        } catch {
            // No verifier answered: nothing learned about the key.
            return .failed(code: FailureCode.appleUnavailable.rawValue, retryable: true)
        }
        if case .failure(let failure) = answer.body {
            if failure.failureCode == .serverAPIUnconfigured {
                availability.withLock { $0.unconfigured(at: clock()) }
                return .unconfigured
            }
            availability.withLock { $0.answered() }
            return .failed(code: failure.code, retryable: failure.retryable)
        }
        availability.withLock { $0.answered() }
        guard let value = read(answer.body) else {
            return .failed(code: FailureCode.internalError.rawValue, retryable: false)
        }
        return .answered(value)
    }
}
