import CurlHTTP
import CurlHTTPTestSupport
import Foundation
import StorekeeperCore
import Testing

/// https as Apple serves it: TLS, then HTTP/2 agreed by ALPN, against a
/// server with storekeeper-sim's test certificate.
@Suite("HTTP/2 over TLS")
struct HTTP2OverTLSTests {
    /// A client that trusts the simulator's certificate, with one multi handle (256 connections per host).
    static func withTrustingClient<T: Sendable>(_ body: (Harness) async throws -> T) async throws -> T {
        let caFile = try SimulatorTLSCertificate.writeCertificate()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let configuration = CurlHTTPClient.Configuration(
            maxConcurrentTransfers: 256, maxConnectionsPerHost: 256, caFile: caFile)
        return try await Harness.with(configuration, tlsServer: true, body)
    }

    @Test("Calls in flight together share the HTTP/2 connection, where HTTP/1.1 opens one per call")
    func concurrentCallsAreMultiplexed() async throws {
        let calls = 64
        try await Self.withTrustingClient { harness in
            // The first call sets the connection up; calls made once it speaks HTTP/2 share it.
            #expect(try await harness.get("/peer").version == .http2)
            let connections = try await connections(holding: calls, through: harness)
            #expect(connections == 1)
        }
        try await Harness.with { harness in
            #expect(try await harness.get("/peer").version == .http1)
            let connections = try await connections(holding: calls, through: harness)
            #expect(connections == calls)
        }
    }

    @Test("One connection carries one call after another")
    func callsInTurnReuseTheConnection() async throws {
        try await Self.withTrustingClient { harness in
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
        try await Self.withTrustingClient { harness in
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
                // Generous: a trust failure ends it at once; the bound only catches a hang.
                try await harness.get("/peer", totalTimeout: .seconds(60))
            }
            #expect(error == .tlsFailure)
        }
    }

    /// Holds `calls` GET /hang in flight together at the server, then releases them; the
    /// connections they came over.
    private func connections(holding calls: Int, through harness: Harness) async throws -> Int {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<calls {
                group.addTask {
                    let response = try await harness.get("/hang")
                    #expect(response.status == 200)
                }
            }
            await harness.server.gate.waitForArrivals(calls)
            let connections = harness.server.gate.connectionCount
            harness.server.gate.open()
            try await group.waitForAll()
            return connections
        }
    }
}
