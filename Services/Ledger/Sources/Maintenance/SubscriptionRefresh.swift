import Contracts
import Foundation
import Logging
import VerifierPool

/// Re-verifies one subscription that lapsed while auto-renew was on (its
/// renewal notification never came): through the App Store Server API (Get
/// All Subscription Statuses) unless the verifiers said lately they have no
/// key, else, or when they answer so, with its latest receipt (verifyReceipt).
/// StoreKit 2 purchases have no receipt: the Server API is their only way.
struct SubscriptionRefresh: Sendable {
    /// One refresh's budget, Apple's retries included.
    static let deadlineMs: Int64 = 60_000

    let committer: GroupCommitter
    let serverAPI: LedgerServerAPI
    let clock: @Sendable () -> Int64
    let logger: Logger

    var pool: VerifierPoolClient { serverAPI.pool }

    func refresh(_ owned: OwnedSubscription) async {
        let requestID = "refresh-\(UUID().uuidString.lowercased())"
        guard let (result, path) = await verified(owned.subscription, requestID: requestID) else { return }
        do {
            _ = try await committer.submit(.refreshResult(result, owner: owned.owner), requestID: requestID)
            logger.info("subscription refreshed", metadata: ["request.id": "\(requestID)", "refresh.path": "\(path)"])
        } catch {
            logger.info("refresh failed", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
        }
    }

    /// Apple's answer and how it was asked (`server_api` or `verify_receipt`); nil when none came.
    private func verified(_ subscription: SubscriptionRecord, requestID: String) async -> (VerifyResult, String)? {
        if serverAPI.shouldAsk {
            switch await serverAPI.subscriptionStatus(subscription.key, requestID: requestID) {
            case .answered(let result): return (result, "server_api")
            case .unconfigured: break
            case .failed(let code, _):
                logger.info("refresh not verified", metadata: ["request.id": "\(requestID)", "failure.code": "\(code)"])
                return nil
            }
        }
        guard !subscription.latestReceipt.isEmpty else { return nil }
        let request = VerifyRequest.with {
            $0.receiptData = subscription.latestReceipt
            $0.startEnvironment = subscription.key.environment
        }
        do {
            let answer = try await pool.verify(
                Envelope(requestID: requestID, deadlineMilliseconds: clock() + Self.deadlineMs, body: .verifyRequest(request)))
            switch answer.body {
            case .verifyResult(let result): return (result, "verify_receipt")
            case .failure(let failure):
                logger.info("refresh not verified", metadata: ["request.id": "\(requestID)", "failure.code": "\(failure.code)"])
            default: break
            }
        } catch {
            logger.info("refresh failed", metadata: ["request.id": "\(requestID)", "error": "\(loggable(error))"])
        }
        return nil
    }
}
