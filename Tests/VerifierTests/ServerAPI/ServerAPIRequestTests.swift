import AppleFormats
import CurlHTTP
import Foundation
import Testing

@testable import Verifier

/// What goes to Apple for each endpoint: method, path, query, body, and
/// whether the sandbox may be asked after production.
@Suite struct ServerAPIRequestTests {
    @Test func transactionCallsUseApplesPathsAndFallBackToSandbox() {
        let cases: [(ServerAPIRequest, HTTPMethod, String, String)] = [
            (.transactionInfo("2000000123"), .get, "/inApps/v1/transactions/2000000123", ""),
            (.transactionHistory("2000000123", revision: nil), .get, "/inApps/v2/history/2000000123", ""),
            (.transactionHistory("2000000123", revision: "rev 7/8"), .get, "/inApps/v2/history/2000000123", "revision=rev%207%2F8"),
            (.subscriptionStatuses("2000000123"), .get, "/inApps/v1/subscriptions/2000000123", ""),
            (.refundHistory("2000000123", revision: "9"), .get, "/inApps/v2/refund/lookup/2000000123", "revision=9"),
            (
                .extendRenewalDate("2000000123", ExtendRenewalDateRequest(extendByDays: 7, extendReasonCode: 1, requestIdentifier: "x")),
                .put, "/inApps/v1/subscriptions/extend/2000000123", ""
            ),
            (.sendConsumption("2000000123", ConsumptionRequest(customerConsented: true)), .put, "/inApps/v1/transactions/consumption/2000000123", ""),
        ]
        for (request, method, path, query) in cases {
            #expect(request.method == method, "\(request.name)")
            #expect(request.path == path, "\(request.name)")
            #expect(request.query == query, "\(request.name)")
            #expect(request.fallsBackToSandbox, "\(request.name)")
            #expect(!request.withoutFallback.fallsBackToSandbox)
        }
    }

    @Test func callsThatNameNoTransactionStayInTheirEnvironment() {
        let body = NotificationHistoryRequest(startDate: 1_000, endDate: 2_000, transactionId: "2000000123")
        let cases: [(ServerAPIRequest, HTTPMethod, String, String)] = [
            (.notificationHistory(body, paginationToken: nil), .post, "/inApps/v1/notifications/history", ""),
            (.notificationHistory(body, paginationToken: "p2"), .post, "/inApps/v1/notifications/history", "paginationToken=p2"),
            (.requestTestNotification(), .post, "/inApps/v1/notifications/test", ""),
            (.testNotificationStatus("8cd2974c-f905"), .get, "/inApps/v1/notifications/test/8cd2974c-f905", ""),
            (.lookUpOrder("MK5TTTVWJH"), .get, "/inApps/v1/lookup/MK5TTTVWJH", ""),
        ]
        for (request, method, path, query) in cases {
            #expect(request.method == method && request.path == path && request.query == query, "\(request.name)")
            #expect(!request.fallsBackToSandbox, "\(request.name)")
        }
    }

    @Test func bodiesAreApplesJSON() throws {
        let history = ServerAPIRequest.notificationHistory(
            NotificationHistoryRequest(startDate: 1_698_148_900_000, endDate: 1_698_148_950_000, notificationType: "SUBSCRIBED"),
            paginationToken: nil)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(history.body)) as? [String: Any])
        #expect(object["startDate"] as? Int == 1_698_148_900_000)
        #expect(object["endDate"] as? Int == 1_698_148_950_000)
        #expect(object["notificationType"] as? String == "SUBSCRIBED")
        #expect(object["transactionId"] == nil, "absent filters are left out")

        let consumption = ServerAPIRequest.sendConsumption(
            "1", ConsumptionRequest(customerConsented: true, consumptionStatus: 1, platform: 2, deliveryStatus: 3))
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(consumption.body)) as? [String: Any])
        #expect(fields["customerConsented"] as? Bool == true)
        #expect(fields["appAccountToken"] as? String == "", "Apple wants the field, empty when there is no token")
        #expect(fields["platform"] as? Int == 2)
    }

    @Test func anIdentifierCannotReachAnotherPath() {
        #expect(ServerAPIRequest.transactionInfo("1/../../lookup/X?y=1").path == "/inApps/v1/transactions/1%2F..%2F..%2Flookup%2FX%3Fy%3D1")
    }

    @Test func theHTTPRequestCarriesTheTokenAndJSONHeaders() {
        let get = ServerAPIRequest.transactionInfo("1").httpRequest(
            baseURL: "https://api.storekit.itunes.apple.com/", token: "T", connectTimeout: .seconds(1),
            totalTimeout: .seconds(2))
        #expect(get.url == "https://api.storekit.itunes.apple.com/inApps/v1/transactions/1")
        #expect(get.headers.map(\.name) == ["Authorization", "Accept"])
        #expect(get.headers.first?.value == "Bearer T")
        #expect(get.totalTimeout == .seconds(2))
        let put = ServerAPIRequest.sendConsumption("1", ConsumptionRequest(customerConsented: true)).httpRequest(
            baseURL: "http://127.0.0.1:1/sandbox", token: "T", connectTimeout: .seconds(1), totalTimeout: .seconds(2))
        #expect(put.method == .put)
        #expect(put.headers.contains { $0 == ("Content-Type", "application/json") })
        #expect(ServerAPIRequest.transactionHistory("1", revision: "2").httpRequest(
            baseURL: "http://h", token: "T", connectTimeout: .seconds(1), totalTimeout: .seconds(1)).url == "http://h/inApps/v2/history/1?revision=2")
    }
}
