import AppleFormats
import Contracts

/// The calls that change something at Apple. Both are safe to send again:
/// an extension is identified by its `requestIdentifier`, and consumption
/// information is a PUT of the whole record.
extension AppStoreServerClient {
    /// Extend a Subscription Renewal Date by `days` (1 to 90). `reason`: 0
    /// undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public func extendRenewalDate(
        _ originalTransactionID: String, byDays days: Int32, reason: Int32, requestIdentifier: String,
        deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> ServerAPIExtension {
        let body = ExtendRenewalDateRequest(extendByDays: days, extendReasonCode: reason, requestIdentifier: requestIdentifier)
        let (environment, answer) = try await executor.perform(
            .extendRenewalDate(originalTransactionID, body), as: ExtendRenewalDateResponse.self, in: .production,
            deadline: self.deadline(deadline))
        return ServerAPIExtension(environment: environment, answer: answer)
    }

    /// Send Consumption Information about a transaction whose refund the
    /// customer asked for (after a CONSUMPTION_REQUEST notification). Apple
    /// answers 202 with no body; the environment that took it is returned.
    /// `environment` sends it there only; nil tries production, then sandbox.
    public func sendConsumption(
        _ transactionID: String, _ information: ConsumptionRequest, environment asked: AppleEnvironment? = nil,
        deadline: ContinuousClock.Instant? = nil
    ) async throws(ServerAPIError) -> AppleEnvironment {
        try await executor.perform(
            .sendConsumption(transactionID, information).restricted(to: asked), in: asked ?? .production,
            deadline: self.deadline(deadline)
        ) { _ in () }.environment
    }
}
