import AppleFormats
import Contracts
import Foundation

/// The ledger's App Store Server API requests, which reach a verifier over
/// the ledger's refresh pool: the verifiers hold the API key, the ledger
/// never does. A verifier without one answers `server_api_unconfigured`,
/// which is how the ledger learns to do without (docs/app-store-server-api.md).
struct ServerAPIPoolRequests: Sendable {
    let client: AppStoreServerClient?

    /// The answer to `body`, or nil when it is not one of these requests.
    func answer(_ body: Envelope.OneOf_Body?, deadline: ContinuousClock.Instant, nowMs: Int64) async -> Envelope.OneOf_Body? {
        switch body {
        case .subscriptionStatusRequest(let request):
            return await call { client throws(ServerAPIError) in
                let statuses = try await client.subscriptionStatuses(
                    request.originalTransactionID, environment: request.environment, deadline: deadline)
                return .verifyResult(statuses.verifyResult(bundleID: client.configuration.credentials.bundleID, nowMs: nowMs))
            }
        case .notificationHistoryQuery(let request):
            return await call { client throws(ServerAPIError) in
                let notifications = try await client.notificationHistory(
                    from: request.startMs, to: request.endMs, environment: request.environment, deadline: deadline)
                return .notificationHistoryPage(.with { $0.notifications = notifications.map(\.apply) })
            }
        case .consumptionInfoRequest(let request):
            return await call { client throws(ServerAPIError) in
                let environment = try await client.sendConsumption(
                    request.transactionID, ConsumptionRequest(request), environment: request.environment, deadline: deadline)
                return .consumptionInfoSent(.with { $0.environment = environment })
            }
        default:
            return nil
        }
    }

    private func call(
        _ body: (AppStoreServerClient) async throws(ServerAPIError) -> Envelope.OneOf_Body
    ) async -> Envelope.OneOf_Body {
        guard let client else {
            return .failure(
                ServiceFailure(.serverAPIUnconfigured, message: "this verifier has no App Store Server API credentials"))
        }
        do {
            return try await body(client)
        } catch {
            return .failure(error.serviceFailure)
        }
    }
}

extension ConsumptionRequest {
    /// Apple's body from the ledger's request: every field Apple requires, as the ledger filled it.
    init(_ request: ConsumptionInfoRequest) {
        self.init(
            customerConsented: request.customerConsented, consumptionStatus: request.consumptionStatus,
            platform: request.platform, sampleContentProvided: request.sampleContentProvided,
            deliveryStatus: request.deliveryStatus, appAccountToken: request.appAccountToken,
            accountTenure: request.accountTenure, playTime: request.playTime,
            lifetimeDollarsRefunded: request.lifetimeDollarsRefunded,
            lifetimeDollarsPurchased: request.lifetimeDollarsPurchased, userStatus: request.userStatus,
            refundPreference: request.refundPreference)
    }
}
