import CurlHTTP
import CurlHTTPTestSupport
import Testing

import Foundation

/// `CurlHTTPClient.taskExecutor`: a task that prefers it runs on the curl
/// loop's thread, makes its calls there, and still runs once the loop is gone.
@Suite("The curl loop as a task executor")
struct LoopExecutorTests {
    /// The calling thread's name (Linux).
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("A task that prefers it runs on the loop's thread before and after each call")
    func callsFromTheLoopThread() async throws {
        try await Harness.with { harness in
            let names = try await withTaskExecutorPreference(harness.client.taskExecutor) {
                var names: [String] = [Self.threadName()]
                for _ in 0..<5 {
                    let response = try await harness.get("/peer")
                    #expect(response.status == 200)
                    names.append(Self.threadName())
                }
                return names
            }
            #expect(names == Array(repeating: "curl-loop", count: 6))
            // Without the preference the task runs elsewhere: the name is what the test checks.
            #expect(Self.threadName() != "curl-loop")
        }
    }

    @Test("Calls from many tasks on the loop's thread each get their own answer")
    func concurrentCallsFromTheLoopThread() async throws {
        try await Harness.with { harness in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<50 {
                    group.addTask(executorPreference: harness.client.taskExecutor) {
                        let body = Array("call \(index)".utf8)
                        let response = try await harness.client.execute(
                            HTTPRequest(method: .post, url: harness.url("/echo"), body: body))
                        #expect(response.body == body)
                        return index
                    }
                }
                let indices = try await group.reduce(into: Set<Int>()) { $0.insert($1) }
                #expect(indices == Set(0..<50))
            }
        }
    }

    @Test("Once the client has stopped, a task that prefers its loop still runs, and its calls fail as shut down")
    func afterTheLoopEnds() async throws {
        let client = try await withRunningClient { client, _ in client }
        let outcome = await withTaskExecutorPreference(client.taskExecutor) {
            await Task.yield()
            return await failure { () async throws(HTTPClientError) in
                try await client.execute(HTTPRequest(method: .get, url: "http://127.0.0.1:9/"))
            }
        }
        #expect(outcome == .shutdown)
    }
}
