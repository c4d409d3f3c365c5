import Foundation
import Testing

/// The gateway's listening socket queues as many completed connections as the
/// system allows. With Hummingbird's 256, a burst of new clients overflowed it
/// and the kernel dropped their handshakes: each waited a second or more for a
/// retransmission (bench/JOURNAL.md, "2026-11-29, 15:40").
@Suite("The gateway's listen queue")
struct GatewayListenQueueTests {
    @Test func theGatewayListensWithTheLongestQueueTheSystemAllows() async throws {
        let ledger = try await LedgerProcess()
        let port = try GatewayProcess.reservePort()
        let gateway = try await GatewayProcess(port: port, ledger: ledger)
        do {
            try await gateway.waitUntilLive()
            let somaxconn = try #require(Int(
                try String(contentsOfFile: "/proc/sys/net/core/somaxconn", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
            // It asks for 65,535; Linux gives at most net.core.somaxconn (4,096 by default).
            #expect(try await Self.listenQueueLength(port: port) == min(somaxconn, 65_535))
        } catch {
            Issue.record("\(error)")
        }
        #expect(await gateway.stop() == 0)
        #expect(await ledger.stop() == 0)
    }

    struct UnexpectedListing: Error { let output: String }

    /// The kernel's limit on a listening socket's queue of completed connections,
    /// as `ss` reads it (`Send-Q` of a socket in LISTEN, through sock_diag).
    static func listenQueueLength(port: Int) async throws -> Int {
        let listing = try await runTool("/usr/bin/ss", ["-ltnH", "sport = :\(port)"])
        // LISTEN  0  4096  127.0.0.1:PORT  0.0.0.0:*
        let fields = listing.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 4, fields[0] == "LISTEN", let length = Int(fields[2]) else {
            throw UnexpectedListing(output: listing)
        }
        return length
    }
}
