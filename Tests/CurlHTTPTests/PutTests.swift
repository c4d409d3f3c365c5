import CurlHTTP
import CurlHTTPTestSupport
import Testing

@Suite("PUT requests")
struct PutTests {
    @Test("A PUT carries its body under its own method, and the reused easy handle sends a POST as a POST again")
    func putSendsItsBodyAndLeavesNoTraceOnTheNextRequest() async throws {
        try await Harness.with { harness in
            let body = Array(#"{"extendByDays": 7}"#.utf8)
            for method in [HTTPMethod.put, .post] {
                let response = try await harness.client.execute(
                    HTTPRequest(method: method, url: harness.url("/echo"), headers: [("Content-Type", "application/json")], body: body))
                #expect(response.status == 200)
                #expect(response.header("X-Echo-Method") == method.rawValue)
                #expect(response.body == body)
            }
        }
    }
}
