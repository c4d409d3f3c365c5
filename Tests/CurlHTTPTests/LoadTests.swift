import CurlHTTP
import Testing
import Glibc

/// Many transfers through one client. Wall times are printed, not asserted:
/// the CI machine has two cores and other work.
@Suite(.serialized) struct LoadTests {
    @Test func fiveHundredConcurrentPosts() async throws {
        let count = 500
        try await Harness.with { harness in
            let clock = ContinuousClock()
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    group.addTask {
                        let body = Array("request \(index) ".utf8) + [UInt8](repeating: UInt8(index % 251), count: index)
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
        let count = Int(String(cString: getenv("BENCH_N") ?? strdup("2000"))) ?? 2000
        let configuration = CurlHTTPClient.Configuration(maxConcurrentTransfers: count, maxConnectionsPerHost: count)
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
}
