import CurlHTTPTestSupport
import Foundation
import Testing

/// The curl loop's thread carries its own name (profiles, /proc), not its creator's.
@Suite struct CurlLoopThreadNameTests {
    @Test func theLoopThreadIsNamed() async throws {
        func names() -> [String] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        let running = try await Harness.with { harness in
            let response = try await harness.get("/peer")
            #expect(response.status == 200)
            return names().filter { $0 == "curl-loop" }.count
        }
        #expect(running >= 1)
    }
}
