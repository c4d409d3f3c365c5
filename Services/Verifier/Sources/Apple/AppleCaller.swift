import AppleFormats
import Contracts
import CurlHTTP
import Foundation
import StorekeeperCore

/// One verifyReceipt call: builds Apple's request body (with the shared
/// secret as `password`), posts it, and turns what came back into an
/// `Outcome` for the state machine. Never logs the body: it holds the receipt
/// and the secret.
struct AppleCaller: Sendable {
    typealias Transport = @Sendable (HTTPRequest) async throws(HTTPClientError) -> HTTPResponse

    let productionURL: String
    let sandboxURL: String
    let sharedSecret: Secret?
    let connectTimeout: Duration
    let attemptTimeout: Duration
    let transport: Transport

    /// Apple's answers are small; anything bigger than this is not one.
    static let maxResponseBytes = 8 * 1_048_576

    struct Body: Encodable {
        let receiptData: String
        let password: String?
        let excludeOldTransactions: Bool?
        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt-data", password, excludeOldTransactions = "exclude-old-transactions"
        }
    }

    func call(
        _ environment: AppleEnvironment, receipt: String, excludeOldTransactions: Bool, timeLeft: Duration
    ) async -> VerificationStateMachine.Outcome {
        let body = Body(
            receiptData: receipt, password: sharedSecret?.revealed,
            excludeOldTransactions: excludeOldTransactions ? true : nil)
        let request = HTTPRequest(
            method: .post, url: environment == .sandbox ? sandboxURL : productionURL,
            headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Array((try? JSONEncoder().encode(body)) ?? Data()),
            connectTimeout: min(connectTimeout, timeLeft), totalTimeout: min(attemptTimeout, timeLeft),
            maxResponseBytes: Self.maxResponseBytes)
        let response: HTTPResponse
        do {
            response = try await transport(request)
        } catch {
            return .transportFailure
        }
        guard response.status == 200 else {
            return .httpStatus(response.status, retryAfter: Self.retryAfter(response.header("Retry-After")))
        }
        guard let answer = try? AppleResponse(body: response.body) else { return .unreadable }
        return .answered(answer)
    }

    /// `Retry-After` in seconds (the HTTP-date form is not used by Apple's verifyReceipt).
    static func retryAfter(_ header: String?) -> Duration? {
        guard let header, let seconds = Int(header.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .seconds(min(seconds, 3_600))
    }
}
