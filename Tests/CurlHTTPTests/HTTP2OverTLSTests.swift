import CurlHTTP
import CurlHTTPTestSupport
import StorekeeperCore
import Testing

/// https as Apple serves it: TLS, then HTTP/2 agreed by ALPN, against a
/// server with storekeeper-sim's test certificate.
@Suite("HTTP/2 over TLS")
struct HTTP2OverTLSTests {
    static func trustingTheSimulator() throws -> CurlHTTPClient.Configuration {
        CurlHTTPClient.Configuration(caFile: try SimulatorTLSCertificate.writeCertificate())
    }

    @Test("Many calls at once share a few HTTP/2 connections, where HTTP/1.1 opens one per call")
    func concurrentCallsAreMultiplexed() async throws {
        let calls = 64
        let configuration = try Self.trustingTheSimulator()
        let http2Peers = try await Harness.with(configuration, tlsServer: true) { harness in
            try await peers(of: calls, through: harness, expecting: .http2)
        }
        // One multi handle per 256 transfers of maxConcurrentTransfers (1,024 here): at most one
        // connection each, since PIPEWAIT has a call wait for the handshake in progress.
        let shards = (configuration.maxConcurrentTransfers + 255) / 256
        #expect(http2Peers.count <= shards)
        let http1Peers = try await Harness.with { harness in
            try await peers(of: calls, through: harness, expecting: .http1)
        }
        #expect(http1Peers.count > shards)
    }

    @Test("One connection carries one call after another")
    func callsInTurnReuseTheConnection() async throws {
        try await Harness.with(try Self.trustingTheSimulator(), tlsServer: true) { harness in
            var peers: Set<String> = []
            for _ in 0..<5 {
                let response = try await harness.get("/peer")
                #expect(response.version == .http2)
                peers.insert(String(decoding: response.body, as: UTF8.self))
            }
            #expect(peers.count == 1)
        }
    }

    @Test("A body goes out and comes back whole over HTTP/2, with the answer's headers")
    func bodiesAndHeadersSurvive() async throws {
        try await Harness.with(try Self.trustingTheSimulator(), tlsServer: true) { harness in
            // Larger than a receipt and than HTTP/2's 16 KiB default frame.
            let body = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let response = try await harness.client.execute(
                HTTPRequest(
                    method: .post, url: harness.url("/echo"), headers: [("Content-Type", "application/octet-stream")],
                    body: body))
            #expect(response.status == 200)
            #expect(response.version == .http2)
            #expect(response.body == body)
            #expect(response.header("X-Echo-Length") == "\(body.count)")
            #expect(response.header("x-echo-method") == "POST")
            let failing = try await harness.get("/status/503")
            #expect(failing.status == 503)
            #expect(failing.header("Retry-After") == "7")
        }
    }

    @Test("The test certificate is trusted only where a CA file names it")
    func theCertificateIsNotTrustedByDefault() async throws {
        try await Harness.with(tlsServer: true) { harness in
            let error = await failure { () async throws(HTTPClientError) in
                try await harness.get("/peer", totalTimeout: .seconds(5))
            }
            #expect(error != nil)
        }
    }

    /// The client ports the server saw for `calls` concurrent GET /peer, each answered 200 in `version`.
    private func peers(of calls: Int, through harness: Harness, expecting version: HTTPResponse.Version) async throws
        -> Set<String>
    {
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<calls {
                group.addTask {
                    let response = try await harness.get("/peer")
                    #expect(response.status == 200)
                    #expect(response.version == version)
                    return String(decoding: response.body, as: UTF8.self)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
    }
}
