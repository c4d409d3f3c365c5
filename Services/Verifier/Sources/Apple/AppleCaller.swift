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

    /// Apple's request body: the receipt, the shared secret as `password` (which
    /// auto-renewable subscriptions need), and `exclude-old-transactions` when asked.
    static func body(receipt: String, password: String?, excludeOldTransactions: Bool) -> [UInt8] {
        var json = JSONWriter(capacity: receipt.utf8.count + 128)
        json.beginObject()
        json.field("receipt-data", receipt)
        if let password { json.field("password", password) }
        if excludeOldTransactions { json.field("exclude-old-transactions", true) }
        json.endObject()
        return json.bytes
    }

    func call(
        _ environment: AppleEnvironment, receipt: String, excludeOldTransactions: Bool, timeLeft: Duration
    ) async -> VerificationStateMachine.Outcome {
        let request = HTTPRequest(
            method: .post, url: environment == .sandbox ? sandboxURL : productionURL,
            headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Self.body(receipt: receipt, password: sharedSecret?.revealed, excludeOldTransactions: excludeOldTransactions),
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
