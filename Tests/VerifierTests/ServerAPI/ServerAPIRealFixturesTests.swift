import AppleFormats
import Synchronization
import AppleJWS
import Contracts
import CurlHTTP
import Foundation
import Logging
import Testing

@testable import Verifier

/// JWS Apple itself signed (real sandbox notifications of 2025 and 2022, and
/// the transactions and renewal info they nest) through the Server API
/// client's own path: answers in Apple's shapes from a scripted Apple, the
/// sandbox fallback, and the same chain checks as StoreKit 2, against Apple's
/// root only.
@Suite("Server API: real Apple-signed data through the client")
struct ServerAPIRealFixturesTests {
    static let bundle = SignedDataReaderTests.sessionBundle

    /// Answers by path: production knows nothing (4040010), sandbox what `answers` says.
    final class ScriptedApple: Sendable {
        let answers: [String: String]
        let seen = Recorder()

        init(_ answers: [String: String]) { self.answers = answers }

        func transport(_ request: CurlHTTP.HTTPRequest) async throws(HTTPClientError) -> HTTPResponse {
            seen.append(request.url)
            guard let range = request.url.range(of: "/sandbox") else {
                return HTTPResponse(status: 404, body: Array(#"{"errorCode": 4040010, "errorMessage": "Transaction id not found."}"#.utf8))
            }
            let path = String(request.url[range.upperBound...].prefix { $0 != "?" })
            guard let body = answers[path] else { return HTTPResponse(status: 404, body: Array(#"{"errorCode": 4040008}"#.utf8)) }
            return HTTPResponse(status: 200, body: Array(body.utf8))
        }
    }

    final class Recorder: Sendable {
        private let urls = Mutex<[String]>([])
        func append(_ url: String) { urls.withLock { $0.append(url) } }
        var all: [String] { urls.withLock { $0 } }
    }

    func client(_ apple: ScriptedApple, bundle: String = Self.bundle, at time: Date = SignedDataReaderTests.realNotificationsTime)
        throws -> AppStoreServerClient
    {
        let verifier = SignedDataVerifier(trustedRoots: try SignedDataVerifier.appleRoots(), validationTime: { time })
        let configuration = ServerAPIClientConfiguration(
            productionURL: "https://api.storekit.itunes.apple.com", sandboxURL: "https://api.storekit-sandbox.itunes.apple.com/sandbox",
            credentials: ServerAPICredentials(
                issuerID: "issuer", keyID: "KEY", bundleID: bundle, signingKey: try ServerAPISigningKey(pem: SimulatorServerAPIKey.privateKeyPEM)),
            appAppleID: 1_470_168_868, connectTimeout: .seconds(1), attemptTimeout: .seconds(1), deadline: .seconds(5),
            acceptSandbox: true)
        return AppStoreServerClient(
            configuration: configuration, reader: SignedDataReader(verifier: verifier, bundleIDs: [bundle]),
            logger: Logger(label: "real-fixtures") { _ in SwiftLogNoOpLogHandler() }, transport: apple.transport)
    }

    /// A real notification's `signedPayload` and the JWS its data nests.
    static func notification(_ name: String) throws -> (payload: String, transaction: String, renewal: String) {
        let payload = try SignedDataReaderTests.signedPayload(name)
        let claims = try #require(Base64URL.decode(payload.split(separator: ".")[1]))
        let data = try #require((try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any])?["data"] as? [String: Any])
        return (payload, try #require(data["signedTransactionInfo"] as? String), try #require(data["signedRenewalInfo"] as? String))
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    @Test func aRealTransactionIsFoundAtSandboxAndVerifies() async throws {
        let renewal = try Self.notification("01-did-renew")
        let apple = ScriptedApple([
            "/inApps/v1/transactions/2000001024998954": try Self.json(TransactionInfoResponse(signedTransactionInfo: renewal.transaction))
        ])
        let result = try await client(apple).transactionInfo("2000001024998954")
        #expect(result.environment == .sandbox)
        #expect(result.bundleID == Self.bundle)
        #expect(result.transactions.first?.transactionID == "2000001024998954")
        #expect(result.transactions.first?.expiresDateMs == 1_759_302_732_000)
        #expect(apple.seen.all.count == 2, "production first, then sandbox")
    }

    @Test func aRealStatusWithItsRenewalInfoVerifies() async throws {
        let renewal = try Self.notification("01-did-renew")
        let status = StatusResponse(
            environment: "Sandbox", bundleId: Self.bundle, appAppleId: 1_470_168_868,
            data: [
                SubscriptionGroupIdentifierItem(
                    subscriptionGroupIdentifier: "21754283",
                    lastTransactions: [
                        LastTransactionsItem(
                            status: 1, originalTransactionId: "2000001024993299", signedTransactionInfo: renewal.transaction,
                            signedRenewalInfo: renewal.renewal)
                    ])
            ])
        let apple = ScriptedApple(["/inApps/v1/subscriptions/2000001024993299": try Self.json(status)])
        let statuses = try await client(apple).subscriptionStatuses("2000001024993299")
        let subscription = try #require(statuses.subscriptions.first)
        #expect(subscription.originalTransactionID == "2000001024993299")
        #expect(subscription.transaction.productID == "com.getsession.org.pro_sub")
        #expect(subscription.renewal?.autoRenewStatus == true)
    }

    @Test func realNotificationsFromTheHistoryVerifyAndDecode() async throws {
        let names = [
            "01-did-renew", "02-subscribed-resubscribe", "03-did-change-renewal-status-auto-renew-disabled",
            "04-expired-voluntary", "06-did-change-renewal-pref-upgrade", "14-refund",
        ]
        let items = try names.map { NotificationHistoryResponseItem(signedPayload: try Self.notification($0).payload, sendAttempts: nil) }
        let apple = ScriptedApple([
            "/inApps/v1/notifications/history": try Self.json(
                NotificationHistoryResponse(paginationToken: nil, hasMore: false, notificationHistory: items))
        ])
        let history = try await client(apple).notificationHistory(from: 0, to: 1_760_000_000_000, environment: .sandbox)
        #expect(history.map(\.apply.notificationType) == ["DID_RENEW", "SUBSCRIBED", "DID_CHANGE_RENEWAL_STATUS", "EXPIRED", "DID_CHANGE_RENEWAL_PREF", "REFUND"])
        #expect(history.allSatisfy { $0.apply.environment == .sandbox && $0.apply.bundleID == Self.bundle })
    }

    @Test func aRealTestNotificationOf2022VerifiesAtItsTime() async throws {
        let url = try #require(
            Bundle.module.url(forResource: "test-notification-2022-body", withExtension: "json", subdirectory: "Fixtures/notifications-v2/real-apple"))
        let body = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let payload = try #require(body["signedPayload"] as? String)
        let apple = ScriptedApple([
            "/inApps/v1/notifications/test/t-1": try Self.json(CheckTestNotificationResponse(signedPayload: payload, sendAttempts: []))
        ])
        // Its leaf expired in 2023: checked as of its signedDate, 2022-09-02.
        let status = try await client(apple, bundle: "com.Abilities", at: Date(timeIntervalSince1970: 1_662_122_492))
            .testNotificationStatus("t-1", environment: .sandbox)
        #expect(status.apply.notificationType == "TEST")
        #expect(status.apply.notificationID == "5e09dcfc-205e-4ea1-9883-96676f394992")
    }

    @Test func todayTheExpiredLeafOf2022IsRefused() async throws {
        let url = try #require(
            Bundle.module.url(forResource: "test-notification-2022-body", withExtension: "json", subdirectory: "Fixtures/notifications-v2/real-apple"))
        let body = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let apple = ScriptedApple([
            "/inApps/v1/notifications/test/t-1": try Self.json(
                CheckTestNotificationResponse(signedPayload: try #require(body["signedPayload"] as? String), sendAttempts: []))
        ])
        let error = await #expect(throws: ServerAPIError.self) {
            try await client(apple, bundle: "com.Abilities", at: Date()).testNotificationStatus("t-1", environment: .sandbox)
        }
        #expect(error?.serviceFailure.failureCode == .signatureInvalid)
    }
}
