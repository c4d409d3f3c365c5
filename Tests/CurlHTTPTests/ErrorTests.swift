import CurlHTTP
import CurlHTTPTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Each way a request can fail, against the local server.
@Suite struct ErrorTests {
    @Test func totalTimeoutThrowsTimedOut() async throws {
        try await Harness.with { harness in
            // /hang never answers before the gate opens (after the test), so
            // the only way out is the client's own time-out.
            let error = await failure { () async throws(HTTPClientError) in
                try await harness.get("/hang", totalTimeout: .milliseconds(200))
            }
            #expect(error == .timedOut)
        }
    }

    /// An idle loop waits with no time-out, so curl's timers are all that
    /// ends a call nobody answers: one lost (curl calls the timer callback
    /// only when its earliest time-out changes, in whole milliseconds) would
    /// hang its call for good. Many short time-outs in a row, each must end.
    @Test(.timeLimit(.minutes(1))) func everyShortTimeOutInARowEnds() async throws {
        try await Harness.with { harness in
            for attempt in 0..<60 {
                let error = await failure { () async throws(HTTPClientError) in
                    try await harness.get("/hang", totalTimeout: .milliseconds(15 + attempt % 7))
                }
                #expect(error == .timedOut, "attempt \(attempt)")
            }
        }
    }

    @Test func closedPortThrowsConnectFailed() async throws {
        // A socket bound to a port but not listening: the kernel answers a
        // connect with a reset, and nobody else can take the port meanwhile.
        let reserved = try ReservedPort()
        defer { reserved.close() }
        try await withRunningClient { client, _ in
            let error = await failure { () async throws(HTTPClientError) in
                // Time-outs no loaded machine reaches: only the reset can end it.
                try await client.execute(
                    HTTPRequest(
                        method: .get, url: "http://127.0.0.1:\(reserved.port)/", connectTimeout: .seconds(120),
                        totalTimeout: .seconds(120)))
            }
            #expect(error == .connectFailed)
        }
    }

    @Test(arguments: [false, true])
    func bodyOverTheCapThrowsResponseTooLarge(chunked: Bool) async throws {
        // With a Content-Length curl refuses up front (CURLOPT_MAXFILESIZE_LARGE);
        // chunked, the write callback stops at the cap.
        try await Harness.with { harness in
            let path = "/big?bytes=70000" + (chunked ? "&chunked=1" : "")
            let error = await failure { () async throws(HTTPClientError) in
                try await harness.get(path, maxResponseBytes: 65_536)
            }
            #expect(error == .responseTooLarge)
            // The same body fits under a larger cap.
            let response = try await harness.get(path, maxResponseBytes: 70_000)
            #expect(response.body.count == 70_000)
        }
    }

    @Test func serverErrorIsAResponse() async throws {
        try await Harness.with { harness in
            let response = try await harness.get("/status/503")
            #expect(response.status == 503)
            #expect(response.header("retry-after") == "7")
            #expect(response.header("RETRY-AFTER") == "7")
        }
    }

    @Test func httpsToPlainHTTPPortFails() async throws {
        try await Harness.with { harness in
            let url = "https://127.0.0.1:\(harness.server.port)/status/200"
            let error = await failure { () async throws(HTTPClientError) in
                try await harness.client.execute(HTTPRequest(method: .get, url: url))
            }
            #expect(error != nil, "TLS to a plain-text port must not succeed")
            #expect(error == .tlsFailure || error == .connectFailed)
        }
    }

    @Test func malformedRequestsAreRefusedBeforeCurl() async throws {
        try await withRunningClient { client, _ in
            let requests = [
                HTTPRequest(method: .get, url: "ftp://127.0.0.1/file"),
                HTTPRequest(method: .get, url: "http://127.0.0.1/a b"),
                HTTPRequest(method: .get, url: "http://127.0.0.1/", headers: [("X-A", "1\r\nX-Injected: 1")]),
                HTTPRequest(method: .get, url: "http://127.0.0.1/", headers: [("Bad Name", "1")]),
                HTTPRequest(method: .get, url: "http://127.0.0.1/", maxResponseBytes: 0),
            ]
            for request in requests {
                let error = await failure { () async throws(HTTPClientError) in try await client.execute(request) }
                #expect(error == .invalidRequest)
            }
        }
    }

    @Test func noTimeLeftThrowsTimedOutAtOnce() async throws {
        try await withRunningClient { client, _ in
            for request in [
                HTTPRequest(method: .get, url: "http://127.0.0.1/", totalTimeout: .zero),
                HTTPRequest(method: .get, url: "http://127.0.0.1/", connectTimeout: .milliseconds(-5)),
            ] {
                let error = await failure { () async throws(HTTPClientError) in try await client.execute(request) }
                #expect(error == .timedOut)
            }
        }
    }

    @Test func errorsAndLogsCarryNoSecrets() async throws {
        let reserved = try ReservedPort()
        defer { reserved.close() }
        let recorder = LogRecorder()
        try await withRunningClient(logger: recorder.logger) { client, _ in
            let request = HTTPRequest(
                method: .post, url: "http://127.0.0.1:\(reserved.port)/verify?token=SECRET-Q",
                headers: [("Authorization", "Bearer SECRET-H")], body: Array("SECRET-B".utf8), connectTimeout: .seconds(120),
                totalTimeout: .seconds(120))
            let error = await failure { () async throws(HTTPClientError) in try await client.execute(request) }
            #expect(error == .connectFailed)
            #expect(!"\(String(describing: error))".contains("SECRET"))
        }
        #expect(recorder.records.contains { $0.contains("transfer failed") })
        #expect(!recorder.records.contains { $0.contains("SECRET") || $0.contains("verify") })
    }
}

/// A loopback TCP port held by a socket that never listens.
struct ReservedPort {
    let descriptor: Int32
    let port: Int

    init() throws {
        // Close-on-exec: processes other tests start must not inherit (and hold) it.
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard descriptor >= 0, bound else { throw TestFailure("could not reserve a port") }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}
