import Foundation
import StorekeeperCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every executable starts, reads its configuration, logs, and stops cleanly
/// on SIGTERM and SIGINT; a bad setting stops it at once, naming the variable.
@Suite(.serialized) struct ExecutableLifecycleTests {
    static let services = ["storekeeper-gateway", "storekeeper-verifier", "storekeeper-ledger", "storekeeper-sim"]

    @Test(arguments: services)
    func startsLogsAndStopsOnSIGTERM(executable: String) async throws {
        let child = try ChildProcess(
            executable,
            environment: try isolatedEnvironment(["STOREKEEPER_LOG_FORMAT": "json", "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper"]))
        let started = await child.waitForOutput(containing: "\"msg\":\"started\"")
        let status = await child.stop()
        #expect(started, "no start line: \(child.captured)")
        #expect(status == 0, "exit status \(String(describing: status)): \(child.captured)")
        #expect(child.captured.contains("\"msg\":\"stopped\""))
        #expect(child.captured.contains("\"logger\":\"\(executable)\""))
    }

    /// Thousands of connections need thousands of descriptors; a soft limit of 1,024 (systemd's
    /// default) would fail accepts and crash libdispatch's worker monitor.
    @Test(arguments: services)
    func raisesItsOpenFileLimitToTheHardLimit(executable: String) async throws {
        let child = try ChildProcess(
            executable, environment: try isolatedEnvironment(["STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper"]),
            openFileSoftLimit: 256)
        let started = await child.waitForOutput(containing: "started")
        let limits = try? String(contentsOfFile: "/proc/\(child.pid)/limits", encoding: .utf8)
        let tableSize = DescriptorTable.size(ofProcess: child.pid)
        await child.stop()
        #expect(started, "no start line: \(child.captured)")
        let line = try #require(limits?.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let values = line.split(separator: " ").compactMap { Int($0) }
        let (soft, hard) = try #require(values.count == 2 ? (values[0], values[1]) : nil, "\(line)")
        try #require(hard > 256, "the machine's hard limit leaves nothing to raise: \(line)")
        #expect(soft == hard, "\(line)")
        #expect(child.captured.contains("open file limit raised"))
        // Its descriptor table was grown at start, so no accept or connect waits for it to double later.
        #expect(try #require(tableSize) >= min(hard, DescriptorTable.startReserve))
    }

    /// Over HTTP/1.1 each Apple call in flight holds a connection: a verifier whose hard limit on
    /// open files is lower than its bound keeps only as many calls in flight as the limit holds.
    @Test func aVerifierKeepsNoMoreCallsInFlightThanItsOpenFileLimitHolds() async throws {
        let child = try ChildProcess(
            "storekeeper-verifier",
            environment: try isolatedEnvironment([
                "STOREKEEPER_LOG_FORMAT": "json", "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
                "STOREKEEPER_VERIFIER_MAX_IN_FLIGHT": "8192",
            ]),
            openFileLimit: 1_024)
        let started = await child.waitForOutput(containing: "\"msg\":\"started\"")
        await child.stop()
        #expect(started, "no start line: \(child.captured)")
        #expect(child.captured.contains("calls in flight lowered to what the open file limit holds"), "\(child.captured)")
        #expect(child.captured.contains("\"pool.capacity\":\"768\""), "\(child.captured)")
    }

    @Test func stopsOnSIGINT() async throws {
        let child = try ChildProcess("storekeeper-ledger", environment: try isolatedEnvironment())
        #expect(await child.waitForOutput(containing: "started"))
        child.signal(SIGINT)
        let status = await child.waitForOwnExit()
        #expect(status == 0, "\(child.captured)")
    }

    @Test(arguments: services)
    func aBadSettingStopsItNamingTheVariable(executable: String) async throws {
        let child = try ChildProcess(executable, environment: ["STOREKEEPER_BINDING_POLICY": "share-it"])
        let status = await child.waitForOwnExit()
        #expect(status == 78)
        #expect(child.captured.contains("STOREKEEPER_BINDING_POLICY"))
        #expect(child.captured.contains("share-it"))
    }

    /// The gateway reads STOREKEEPER_HTTP_THREADS before anything else, to size its event loops:
    /// a bad value must still reach the configuration check, not NIO (which would crash on 0).
    @Test(arguments: ["0", "two", "257"])
    func aBadThreadCountStopsTheGatewayNamingTheVariable(value: String) async throws {
        let child = try ChildProcess("storekeeper-gateway", environment: ["STOREKEEPER_HTTP_THREADS": value])
        let status = await child.waitForOwnExit()
        #expect(status == 78)
        #expect(child.captured.contains("STOREKEEPER_HTTP_THREADS"))
    }

    @Test(arguments: ["storekeeper-gateway", "storekeeper-verifier"])
    func withoutBundleIDsTheEdgeRefusesToStart(executable: String) async throws {
        let child = try ChildProcess(executable, environment: ["STOREKEEPER_BUNDLE_IDS": ""])
        let status = await child.waitForOwnExit()
        #expect(status == 78)
        #expect(child.captured.contains("STOREKEEPER_BUNDLE_IDS"))
    }

    @Test func upWithoutTheSimulatorNeedsBundleIDs() async throws {
        let child = try ChildProcess("storekeeper", arguments: ["up"], environment: ["STOREKEEPER_BUNDLE_IDS": ""])
        let status = await child.waitForOwnExit()
        #expect(status == 78)
        #expect(child.captured.contains("STOREKEEPER_BUNDLE_IDS"))
    }

    @Test func theSharedSecretNeverReachesTheLog() async throws {
        let secret = "f00dfeedcafe0123456789"
        let child = try ChildProcess(
            "storekeeper-verifier",
            environment: try isolatedEnvironment([
                "STOREKEEPER_APPLE_SHARED_SECRET": secret, "STOREKEEPER_LOG_LEVEL": "trace",
                "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
            ]))
        #expect(await child.waitForOutput(containing: "started"))
        await child.stop()
        #expect(!child.captured.contains(secret))
    }

    @Test func servesPrometheusMetricsWhenAsked() async throws {
        let port = try freeLoopbackPort()
        let child = try ChildProcess(
            "storekeeper-ledger", environment: try isolatedEnvironment(["STOREKEEPER_METRICS_ADDR": "127.0.0.1:\(port)"]))
        #expect(await child.waitForOutput(containing: "started"))
        var body: String?
        for _ in 0..<100 where body == nil {
            if let (data, response) = try? await URLSession.shared.data(
                from: URL(string: "http://127.0.0.1:\(port)/metrics")!),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                body = String(decoding: data, as: UTF8.self)
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let status = await child.stop()
        #expect(body != nil, "no /metrics answer: \(child.captured)")
        #expect(status == 0)
    }

    @Test func cliConfigValidatesAndRedacts() async throws {
        let good = try ChildProcess(
            "storekeeper", arguments: ["config"],
            environment: ["STOREKEEPER_API_KEYS": "sk-very-secret-1", "STOREKEEPER_BINDING_POLICY": "keep"])
        #expect(await good.waitForExit() == 0)
        #expect(good.captured.contains("STOREKEEPER_BINDING_POLICY=keep"))
        #expect(good.captured.contains("STOREKEEPER_API_KEYS=<set>"))
        #expect(!good.captured.contains("sk-very-secret-1"))

        let bad = try ChildProcess("storekeeper", arguments: ["config"], environment: ["STOREKEEPER_HTTP_ADDR": "x"])
        #expect(await bad.waitForExit() == 78)
        #expect(bad.captured.contains("STOREKEEPER_HTTP_ADDR"))
    }
}
