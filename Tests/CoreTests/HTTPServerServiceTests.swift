import CurlHTTP
import Hummingbird
import Logging
import ServiceLifecycle
@testable import StorekeeperCore
import Testing
import Synchronization
import Timekeeping

@Suite struct HTTPDateHeaderTests {
    @Test func formatsTheIMFFixdateOfRFC9110() {
        // RFC 9110's own example.
        #expect(HTTPDateHeader.format(secondsSinceEpoch: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDateHeader.format(secondsSinceEpoch: 951_868_799) == "Tue, 29 Feb 2000 23:59:59 GMT")
    }

    @Test func followsTheClockSecondBySecond() {
        let now = Mutex<Int64>(784_111_777_000)
        let header = HTTPDateHeader(clock: WallClock { now.withLock { $0 } })
        #expect(header.value == "Sun, 06 Nov 1994 08:49:37 GMT")
        now.withLock { $0 += 999 }
        #expect(header.value == "Sun, 06 Nov 1994 08:49:37 GMT")
        now.withLock { $0 += 1 }
        #expect(header.value == "Sun, 06 Nov 1994 08:49:38 GMT")
    }
}

@Suite struct HTTPServerServiceTests {
    /// Answers through the router with a `Date` header, and a graceful shutdown ends it.
    @Test func servesTheRouterAndStopsOnGracefulShutdown() async throws {
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let router = Router()
        router.get("/hello") { _, _ in "hi" }
        let port = AsyncStream<Int>.makeStream()
        let server = HTTPServerService(
            responder: router.buildResponder(), address: .hostname("127.0.0.1", port: 0),
            date: HTTPDateHeader(clock: .fixed(at: 784_111_777_000)), logger: logger,
            onServerRunning: { channel in port.continuation.yield(channel.localAddress?.port ?? 0) })
        let client = CurlHTTPClient(logger: logger)
        let group = ServiceGroup(services: [client, server], logger: logger)
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await group.run() }
            var ports = port.stream.makeAsyncIterator()
            let bound = try #require(await ports.next())
            let response = try await client.execute(CurlHTTP.HTTPRequest(method: .get, url: "http://127.0.0.1:\(bound)/hello"))
            #expect(response.status == 200)
            #expect(response.body == Array("hi".utf8))
            #expect(response.headers.first { $0.name.lowercased() == "date" }?.value == "Sun, 06 Nov 1994 08:49:37 GMT")
            await group.triggerGracefulShutdown()
            // Ends only when every service returned: a server stuck in its shutdown would hang here.
            try await tasks.waitForAll()
        }
    }
}
