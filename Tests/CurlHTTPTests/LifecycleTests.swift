@testable import CurlHTTP
import CurlHTTPTestSupport
import Logging
import ServiceLifecycle
import Testing

/// Cancellation, stopping, queueing and connection reuse.
@Suite struct LifecycleTests {
    @Test func cancellingTheCallerThrowsCancelled() async throws {
        try await Harness.with { harness in
            let call = Task { await outcome { () async throws(HTTPClientError) in try await harness.get("/hang") } }
            await harness.server.gate.waitForArrivals(1)  // the transfer is in flight
            call.cancel()
            #expect(await call.value.failure == .cancelled)
            // The loop carries on.
            let next = try await harness.get("/status/204")
            #expect(next.status == 204)
        }
    }

    @Test func cancelledBeforeSendingThrowsCancelled() async throws {
        try await Harness.with { harness in
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await outcome { () async throws(HTTPClientError) in try await harness.get("/status/200") }
            }
            #expect(await call.value.failure == .cancelled)
        }
    }

    @Test func stoppingTheClientFailsOutstandingRequests() async throws {
        // Two transfers in flight, three more queued behind the limit of two.
        try await Harness.with(.init(maxConcurrentTransfers: 2)) { harness in
            try await withThrowingTaskGroup(of: HTTPClientError?.self) { calls in
                for _ in 0..<5 {
                    calls.addTask { await failure { () async throws(HTTPClientError) in try await harness.get("/hang") } }
                }
                await harness.server.gate.waitForArrivals(2)
                await harness.clientGroup.triggerGracefulShutdown()
                for try await error in calls {
                    #expect(error == .shutdown)
                }
            }
            let late = await failure { () async throws(HTTPClientError) in try await harness.get("/status/200") }
            #expect(late == .shutdown)
        }
    }

    @Test func cancellingRunFailsOutstandingRequests() async throws {
        try await TestServer.with { server in
            let client = CurlHTTPClient(logger: .quiet)
            let run = Task { try await client.run() }
            let call = Task {
                await outcome { () async throws(HTTPClientError) in
                    try await client.execute(HTTPRequest(method: .get, url: server.url("/hang")))
                }
            }
            await server.gate.waitForArrivals(1)
            run.cancel()
            try await run.value
            #expect(await call.value.failure == .shutdown)
        }
    }

    @Test func requestsMadeBeforeRunWaitInTheQueue() async throws {
        try await TestServer.with { server in
            let client = CurlHTTPClient(logger: .quiet)
            let call = Task {
                await outcome { () async throws(HTTPClientError) in
                    try await client.execute(HTTPRequest(method: .get, url: server.url("/status/202")))
                }
            }
            while client.queuedRequestCount == 0 { await Task.yield() }
            let run = Task { try await client.run() }
            #expect(try await call.value.get().status == 202)
            run.cancel()
            try await run.value
        }
    }

    /// A request whose time-out ran out while it waited in the queue fails
    /// in the turn that takes it, before curl sees it: no socket or timer of
    /// curl's would ever wake the loop for that answer, and an idle loop's
    /// wait has no time-out.
    @Test(.timeLimit(.minutes(1))) func aRequestWhoseTimeRanOutInTheQueueFailsWhenTheLoopTakesIt() async throws {
        try await TestServer.with { server in
            let client = CurlHTTPClient(logger: .quiet)
            let call = Task {
                await outcome { () async throws(HTTPClientError) in
                    try await client.execute(
                        HTTPRequest(method: .get, url: server.url("/status/202"), totalTimeout: .milliseconds(20)))
                }
            }
            while client.queuedRequestCount == 0 { await Task.yield() }
            try await Task.sleep(for: .milliseconds(50))  // its 20 ms pass in the queue
            let run = Task { try await client.run() }
            #expect(await call.value.failure == .timedOut)
            run.cancel()
            try await run.value
        }
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let requests = 20
        try await Harness.with { harness in
            var ports: Set<String> = []
            for _ in 0..<requests {
                let response = try await harness.get("/peer")
                #expect(response.status == 200)
                ports.insert(String(decoding: response.body, as: UTF8.self))
            }
            print("connection reuse: \(requests) sequential requests used \(ports.count) connection(s)")
            #expect(ports.count < requests)
        }
    }
}
