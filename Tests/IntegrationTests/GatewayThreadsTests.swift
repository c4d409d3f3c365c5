import Foundation
import Testing

/// `STOREKEEPER_HTTP_THREADS` sizes the gateway's event loops, which serve HTTP
/// and run its tasks: one by default, as many as asked otherwise.
@Suite("The gateway's event-loop threads", .serialized)
struct GatewayThreadsTests {
    @Test(arguments: [(nil, 1), ("3", 3)] as [(String?, Int)])
    func theGatewayRunsTheEventLoopsItIsToldTo(setting: String?, loops: Int) async throws {
        let ledger = try await LedgerProcess()
        let gateway = try await GatewayProcess(
            port: try GatewayProcess.reservePort(), ledger: ledger,
            extraEnvironment: setting.map { ["STOREKEEPER_HTTP_THREADS": $0] } ?? [:])
        do {
            try await gateway.waitUntilLive()
            #expect(Self.eventLoopThreads(of: gateway.process.pid) == loops)
        } catch {
            Issue.record("\(error)")
        }
        #expect(await gateway.stop() == 0)
        #expect(await ledger.stop() == 0)
    }

    /// NIO names its singleton group's threads `NIO-SGLTN-<group>-#<loop>` (Linux's /proc, as CI runs).
    static func eventLoopThreads(of pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("NIO-SGLTN-")
        }.count
    }
}
