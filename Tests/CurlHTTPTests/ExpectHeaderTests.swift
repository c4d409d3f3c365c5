import CurlHTTP
import CurlHTTPTestSupport
import Testing

@Suite("Request headers on the wire")
struct ExpectHeaderTests {
    /// A receipt-sized body: curl adds `Expect: 100-continue` past 1 KiB unless told not to.
    static let receiptSizedBody = Array(repeating: UInt8(ascii: "M"), count: 8_192)

    @Test("Defect 1: no Expect header reaches the server, so a strict server answers 200, not 417")
    func noExpectHeaderIsSent() async throws {
        let answers = try await StrictWireServer.with { server in
            try await withRunningClient { client, _ in
                var statuses: [Int] = []
                for body in [Self.receiptSizedBody, Array("{}".utf8)] {
                    let request = HTTPRequest(
                        method: .post, url: server.url, headers: [("Content-Type", "application/json")], body: body)
                    statuses.append(try await client.execute(request).status)
                }
                return (statuses, server.receivedHeads)
            }
        }
        #expect(answers.0 == [200, 200])
        #expect(answers.1.count == 2)
        for head in answers.1 {
            let names = head.split(separator: "\r\n").dropFirst().compactMap { $0.split(separator: ":").first?.lowercased() }
            #expect(!names.contains("expect"), "\(head)")
            #expect(names.contains("content-type"))
        }
    }
}
