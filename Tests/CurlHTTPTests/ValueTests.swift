@testable import CurlHTTP
import Testing

/// Header parsing, header lookup, error descriptions and time-out conversion.
@Suite struct ValueTests {
    @Test func anOriginIsTheSchemeAndAuthority() {
        func origin(_ url: String) -> Substring { HTTPRequest(method: .get, url: url).origin }
        #expect(origin("https://buy.itunes.apple.com/verifyReceipt") == "https://buy.itunes.apple.com")
        #expect(origin("http://127.0.0.1:8080?x=1") == "http://127.0.0.1:8080")
        #expect(origin("http://127.0.0.1:8080#top") == "http://127.0.0.1:8080")
        #expect(origin("https://sandbox.itunes.apple.com") == "https://sandbox.itunes.apple.com")
    }

    @Test func headerLookupIgnoresCase() {
        let response = HTTPResponse(status: 200, headers: [("Retry-After", "5"), ("Set-Cookie", "a"), ("set-cookie", "b")])
        #expect(response.header("retry-after") == "5")
        #expect(response.headers(named: "SET-COOKIE") == ["a", "b"])
        #expect(response.header("Missing") == nil)
    }

    @Test func headersOfTheFinalResponseOnly() throws {
        let transfer = Transfer(id: 1, easy: UnsafeMutableRawPointer(bitPattern: 1)!, maxBodyBytes: 10)
        for line in [
            "HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "Content-Type:  text/plain \r\n",
            "X-Long: a\r\n", " b\r\n", "X-Tabbed:\t two  words\t\r\n", "X-Empty:\r\n", "no colon here\r\n",
            "X-Time: 12:30\n", "\r\n",
        ] {
            let accepted = Array(line.utf8).withUnsafeBytes { transfer.receiveHeader($0) }
            #expect(accepted)
        }
        #expect(transfer.headers.map(\.name) == ["Content-Type", "X-Long", "X-Tabbed", "X-Empty", "X-Time"])
        #expect(transfer.headers.map(\.value) == ["text/plain", "a b", "two  words", "", "12:30"])
    }

    @Test func bodyCapRefusesTheOverflowingChunk() {
        let transfer = Transfer(id: 1, easy: UnsafeMutableRawPointer(bitPattern: 1)!, maxBodyBytes: 10)
        #expect([UInt8](repeating: 1, count: 10).withUnsafeBytes { transfer.receiveBody($0) })
        #expect(!transfer.capExceeded)
        #expect(![UInt8(1)].withUnsafeBytes { transfer.receiveBody($0) })
        #expect(transfer.capExceeded)
    }

    @Test func descriptionsAreShortAndStable() {
        #expect(HTTPClientError.timedOut.description == "timed out")
        #expect(HTTPClientError.transport(curlCode: 56).description == "transport error (curl 56)")
        #expect(HTTPClientError.transport(curlCode: 56).curlCode == 56)
        #expect(HTTPClientError.shutdown.curlCode == nil)
    }

    @Test func timeoutsRoundUpToWholeMilliseconds() {
        #expect(Duration.microseconds(1).curlMilliseconds == 1)
        #expect(Duration.milliseconds(1_500).curlMilliseconds == 1_500)
        #expect(Duration.nanoseconds(1_500_001).curlMilliseconds == 2)
        #expect(Duration.seconds(Int64.max).curlMilliseconds == Int(Int32.max))
    }
}
