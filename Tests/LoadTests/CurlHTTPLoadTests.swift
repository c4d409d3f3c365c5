import CurlHTTP
import CurlHTTPTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Many transfers through one client. Wall times are printed, not asserted:
/// the CI machine has two cores and other work (so the time-outs are long).
@Suite(.serialized) struct LoadTests {
    @Test func fiveHundredConcurrentPosts() async throws {
        let count = 500
        try raiseOpenFileLimit(to: 3 * count)
        try await Harness.with(CurlHTTPClient.Configuration(connectTimeout: .seconds(60), totalTimeout: .seconds(60))) { harness in
            let clock = ContinuousClock()
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    group.addTask {
                        let body = Array("request \(index) ".utf8) + [UInt8](repeating: UInt8(index % 251), count: index * 5)
                        let response = try await harness.client.execute(
                            HTTPRequest(
                                method: .post, url: harness.url("/echo"),
                                headers: [("Content-Type", "application/octet-stream")], body: body))
                        #expect(response.status == 200)
                        #expect(response.body == body)
                        #expect(response.header("x-echo-length") == "\(body.count)")
                    }
                }
                try await group.waitForAll()
            }
            print("\(count) concurrent POSTs: \(clock.now - start)")
        }
    }

    @Test func twoThousandRequestsInFlight() async throws {
        let count = 2_000
        // Both ends of every connection live in this process.
        try raiseOpenFileLimit(to: 3 * count)
        let configuration = CurlHTTPClient.Configuration(
            maxConcurrentTransfers: count, maxConnectionsPerHost: count, connectTimeout: .seconds(60), totalTimeout: .seconds(60))
        try await Harness.with(configuration) { harness in
            let clock = ContinuousClock()
            let start = clock.now
            let completed = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        let response = try await harness.get("/slow?ms=1000", totalTimeout: .seconds(60))
                        return response.status == 200 && response.body == Array("slow".utf8) ? 1 : 0
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(completed == count)
            print("\(count) requests in flight against a 1 s endpoint: \(clock.now - start)")
        }
    }

    /// 600 connections allowed to the host make two multi handles of 300 (`MultiShard`): all 600
    /// connections must open, so both handles take transfers, and no 601st may, so the cap holds
    /// across them. The rest wait inside the client until connections come free, and then reuse
    /// them: a transfer that found no free connection and was allowed another would have opened
    /// it at once, while all 600 hung, so 700 requests over exactly 600 connections is the proof.
    @Test func theHostCapHoldsAcrossTheClientsMultiHandles() async throws {
        let (count, cap) = (700, 600)
        try raiseOpenFileLimit(to: 3 * count)
        let configuration = CurlHTTPClient.Configuration(
            maxConcurrentTransfers: count, maxConnectionsPerHost: cap, connectTimeout: .seconds(60), totalTimeout: .seconds(60))
        try await Harness.with(configuration) { harness in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<count {
                    group.addTask { try await harness.get("/hang", totalTimeout: .seconds(60)).status }
                }
                await harness.server.gate.waitForArrivals(cap)
                harness.server.gate.open()
                let statuses = try await group.reduce(into: [Int]()) { $0.append($1) }
                #expect(statuses == Array(repeating: 200, count: count))
                #expect(harness.server.gate.arrivalCount == count)
                #expect(harness.server.gate.connectionCount == cap)
            }
        }
    }

    /// Two origins, each allowed 512 connections over two multi handles: each origin must get all
    /// 512, so none of its transfers waits inside curl while a handle has room for it.
    @Test func eachOriginGetsItsWholeCapAcrossTheHandles() async throws {
        let cap = 512
        try raiseOpenFileLimit(to: 6 * cap)
        let configuration = CurlHTTPClient.Configuration(
            maxConcurrentTransfers: 2 * cap, maxConnectionsPerHost: cap, connectTimeout: .seconds(60), totalTimeout: .seconds(60))
        try await TestServer.with { first in
            try await TestServer.with { second in
                try await withRunningClient(configuration) { client, _ in
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for index in 0..<(2 * cap) {
                            let server = index.isMultiple(of: 2) ? first : second
                            group.addTask {
                                try await client.execute(
                                    HTTPRequest(method: .get, url: server.url("/hang"), totalTimeout: .seconds(60))
                                ).status
                            }
                        }
                        let clock = ContinuousClock()
                        let deadline = clock.now + .seconds(50)  // under the requests' 60 s
                        while first.gate.arrivalCount + second.gate.arrivalCount < 2 * cap, clock.now < deadline {
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        #expect(first.gate.arrivalCount == cap)
                        #expect(second.gate.arrivalCount == cap)
                        first.gate.open()
                        second.gate.open()
                        let statuses = try await group.reduce(into: [Int]()) { $0.append($1) }
                        #expect(statuses == Array(repeating: 200, count: 2 * cap))
                    }
                }
            }
        }
    }
}

/// Raises the soft limit on open descriptors (many shells start at 1,024).
private func raiseOpenFileLimit(to wanted: Int) throws {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { throw TestFailure("getrlimit failed") }
    guard limit.rlim_cur < rlim_t(wanted) else { return }
    guard limit.rlim_max >= rlim_t(wanted) else {
        throw TestFailure("the hard limit on open files (\(limit.rlim_max)) is below \(wanted)")
    }
    limit.rlim_cur = rlim_t(wanted)
    guard setrlimit(resource, &limit) == 0 else { throw TestFailure("setrlimit failed") }
}
