import AppleFormats
import Contracts
import CurlHTTP
import Foundation
import Hummingbird
import StorekeeperCore

/// One receipt: read the request, ask production (then sandbox on 21007),
/// grant each transaction once, answer in the contract's shape.
struct FloorReceiptHandler: Sendable {
    let apple: AppleSettings
    let client: CurlHTTPClient
    let grants: FloorGrants

    func answer(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        guard let fields = try? JSONValueParser.parse(Array(buffer: body)),
            let userID = fields["user_id"]?.text,
            let receipt = fields["receipt_data"]?.text ?? fields["receipt-data"]?.text
        else { return Self.error(.badRequest, "bad_request") }

        let appleRequest = try Self.appleBody(receipt: receipt, password: apple.sharedSecret?.revealed)
        var environment = AppleEnvironment.production
        guard var appleAnswer = await ask(apple.productionURL, appleRequest) else {
            return Self.error(.serviceUnavailable, "apple_unavailable", retryable: true)
        }
        if appleAnswer.status == 21007 {
            environment = .sandbox
            guard let sandbox = await ask(apple.sandboxURL, appleRequest) else {
                return Self.error(.serviceUnavailable, "apple_unavailable", retryable: true)
            }
            appleAnswer = sandbox
        }
        switch appleAnswer.status {
        case 0: break
        case 21004: return Self.error(.badGateway, "shared_secret_mismatch", appleStatus: appleAnswer.status)
        case 21005, 21009, 21100...21199:
            return Self.error(.serviceUnavailable, "apple_unavailable", retryable: true, appleStatus: appleAnswer.status)
        default: return Self.error(.unprocessableContent, "receipt_invalid", appleStatus: appleAnswer.status)
        }
        let result = ReceiptNormalizer.normalize(appleAnswer, environment: environment, receiptSHA256: "")
        guard apple.bundleIDs.isEmpty || apple.bundleIDs.contains(result.bundleID) else {
            return Self.error(.unprocessableContent, "bundle_mismatch")
        }
        let live = result.transactions.filter { !$0.hasCancellationDateMs }
        let renewals = Dictionary(
            result.pendingRenewals.map { ($0.originalTransactionID, $0.autoRenewStatus) }, uniquingKeysWith: { $1 })
        let recorded = try await grants.record(
            FloorGrants.Work(
                userID: userID, environment: environment.appleName, transactions: live,
                renewals: renewals))
        return try FloorAnswer(userID: userID, result: result, recorded: recorded).response()
    }

    /// Apple's answer, or nil when the call failed or the body is not one.
    private func ask(_ url: String, _ body: [UInt8]) async -> AppleResponse? {
        let request = CurlHTTP.HTTPRequest(
            method: .post, url: url, headers: [("Content-Type", "application/json")], body: body,
            totalTimeout: .seconds(30))
        guard let response = try? await client.execute(request), response.status == 200 else { return nil }
        return try? AppleResponse(body: response.body)
    }

    private static func appleBody(receipt: String, password: String?) throws -> [UInt8] {
        var fields = ["receipt-data": receipt]
        if let password { fields["password"] = password }
        return Array(try JSONEncoder().encode(fields))
    }

    private static func error(
        _ status: HTTPTypes.HTTPResponse.Status, _ code: String, retryable: Bool = false, appleStatus: Int? = nil
    ) -> Response {
        struct Failure: Encodable {
            let code: String
            let message: String
            let retryable: Bool
            let apple_status: Int?
        }
        let failure = Failure(
            code: code, message: code.replacingOccurrences(of: "_", with: " "), retryable: retryable,
            apple_status: appleStatus)
        return (try? FloorAnswer.json(status, ["error": failure])) ?? Response(status: status)
    }
}
