import CurlHTTP
import CurlHTTPTestSupport
import Foundation
import Testing

/// A task that prefers the client's task executor runs on the curl loop's
/// thread, its calls included; once the loop has stopped, such a task still
/// runs (elsewhere) and its calls fail with `.shutdown`.
@Suite(.timeLimit(.minutes(1))) struct CurlLoopExecutorTests {
    static var threadName: String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func tasksPreferringTheClientsExecutorRunOnTheLoopsThreadAndTheirCallsComplete() async throws {
        let (statuses, threads) = try await Harness.with { harness in
            try await withTaskExecutorPreference(harness.client.taskExecutor) {
                try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            let before = Self.threadName
                            let status = try await harness.get("/peer").status
                            return (status, [before, Self.threadName])
                        }
                    }
                    var statuses: [Int] = []
                    var threads: Set<String> = []
                    for try await (status, names) in group {
                        statuses.append(status)
                        threads.formUnion(names)
                    }
                    return (statuses, threads)
                }
            }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(threads == ["curl-loop"], "ran on \(threads)")
    }

    @Test func aTaskPreferringAStoppedClientsExecutorStillRunsAndItsCallFails() async throws {
        let client = try await withRunningClient { client, _ in client }
        let request = HTTPRequest(method: .get, url: "http://127.0.0.1:9/")
        let seen: (thread: String, error: HTTPClientError?) = await withTaskExecutorPreference(client.taskExecutor) {
            let error = await failure { () async throws(HTTPClientError) -> HTTPResponse in try await client.execute(request) }
            return (Self.threadName, error)
        }
        #expect(seen.error == .shutdown)
        #expect(seen.thread != "curl-loop")
    }
}
