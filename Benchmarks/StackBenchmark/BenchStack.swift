// The real stack for the benchmark: simulator, ledger, verifiers and gateway
// as separate processes on free loopback ports, with their metrics reachable.
import AppleJWS
import BenchmarkSupport
import Foundation
import ProcessSpawn

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct BenchStack {
    static let secret = "bench-shared-secret"
    let members: [(name: String, process: SpawnedProcess)]
    let gatewayPort: Int
    let simPort: Int
    let verifierMetrics: [String]
    let dataDirectory: String

    /// - Parameters:
    ///   - databaseURL: the ledger on PostgreSQL (a database of its own), or on SQLite when nil.
    ///   - receiptMode: how the verifiers read receipts (`STOREKEEPER_RECEIPT_VERIFICATION`).
    ///   - simulatorPort: a simulator already running there (not a member), or nil to start one.
    ///   - appleTLS: the verifiers call the simulator over TLS (HTTP/2 by ALPN) on its
    ///     `STOREKEEPER_SIM_TLS_ADDR`, instead of plain HTTP/1.1.
    ///   - simulatorTLSPort: that address's port when the simulator runs already; nil picks one.
    ///   - transport: TCP on loopback, or `ipc://` socket files in the data directory.
    static func start(
        binDir: String, verifiers: Int, databaseURL: String? = nil, receiptMode: ReceiptMode = .verifyReceipt,
        simulatorPort: Int? = nil, appleTLS: Bool = false, simulatorTLSPort: Int? = nil, transport: ZeroMQTransport = .tcp
    ) async throws -> BenchStack {
        let ports = freePorts(8 + verifiers)
        let (gatewayPort, simPort) = (ports[0], simulatorPort ?? ports[1])
        let dataDirectory = NSTemporaryDirectory() + "storekeeper-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let endpoints = transport.endpoints(ports: Array(ports[2...6]), directory: dataDirectory)
        let apple = try AppleLink(http1Port: simPort, tlsPort: appleTLS ? simulatorTLSPort ?? ports[7] : nil)
        let common = endpoints.merging([
            "STOREKEEPER_APPLE_SHARED_SECRET": secret, "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
        ]) { $1 }
        var members: [(String, SpawnedProcess)] = []
        if simulatorPort == nil {
            members.append(("sim", try BenchmarkSupport.start(
                "storekeeper-sim", common.merging(apple.simulatorEnvironment) { $1 }, binDir: binDir)))
        }
        members.append(("ledger", try BenchmarkSupport.start(
            "storekeeper-ledger",
            common.merging(["STOREKEEPER_DATA_DIR": dataDirectory]) { $1 }
                .merging(databaseURL.map { ["STOREKEEPER_DATABASE_URL": $0] } ?? [:]) { $1 },
            binDir: binDir)))
        let serverAPI = try receiptMode.verifierEnvironment(simulator: apple.base, directory: dataDirectory)
        var verifierMetrics: [String] = []
        for index in 0..<verifiers {
            let metricsPort = ports[8 + index]
            verifierMetrics.append("http://127.0.0.1:\(metricsPort)/metrics")
            members.append(("verifier-\(index + 1)", try BenchmarkSupport.start(
                "storekeeper-verifier",
                common.merging(["STOREKEEPER_METRICS_ADDR": "127.0.0.1:\(metricsPort)"]) { $1 }
                    .merging(apple.clientEnvironment) { $1 }.merging(serverAPI) { $1 }, binDir: binDir)))
        }
        members.append(("gateway", try BenchmarkSupport.start(
            "storekeeper-gateway",
            common.merging(["STOREKEEPER_HTTP_ADDR": "127.0.0.1:\(gatewayPort)", "STOREKEEPER_RATE_LIMIT_PER_MINUTE": "0"]) { $1 },
            binDir: binDir)))
        let stack = BenchStack(
            members: members, gatewayPort: gatewayPort, simPort: simPort, verifierMetrics: verifierMetrics,
            dataDirectory: dataDirectory)
        for _ in 0..<300 {
            if let (_, response) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(gatewayPort)/readyz")!),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                // Every verifier announced itself, not just the first.
                try await Task.sleep(for: .seconds(1))
                return stack
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        stack.stop()
        throw NotReady()
    }

    struct NotReady: Error {}

    func stop() {
        for (_, process) in members.reversed() { process.terminateAndWait() }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    /// CPU seconds each member, and this process (the load generator), used so far.
    func cpuSeconds() -> [(name: String, seconds: Double)] {
        members.map { ($0.name, BenchmarkSupport.cpuSeconds($0.process.pid)) }
            + [("generator", BenchmarkSupport.cpuSeconds(getpid()))]
    }

    /// CPU seconds each member and the generator used since `before` (an earlier `cpuSeconds()`).
    func cpuSeconds(since before: [(name: String, seconds: Double)]) -> [(name: String, seconds: Double)] {
        zip(cpuSeconds(), before).map { (name: $0.name, seconds: $0.seconds - $1.seconds) }
    }

    /// What stands in for Apple and the app backends in the CPU and memory
    /// lines: the simulator and this process. The rest is Storekeeper.
    static let harness: Set<String> = ["sim", "generator"]

    /// Context switches of the Storekeeper processes together (not the simulator) so far.
    func storekeeperContextSwitches() -> Int {
        members.filter { !Self.harness.contains($0.name) }.map { contextSwitches($0.process.pid) }.reduce(0, +)
    }

    /// Peak resident memory of each member so far (VmHWM), in KiB.
    func peakKiB() -> [(name: String, kib: Int)] {
        members.map { ($0.name, peakResidentKiB($0.process.pid)) }
    }

    /// A counter or a histogram's `_count` summed over every verifier (every label set, or
    /// those whose labels contain `labels`).
    func verifierTotal(_ metric: String, labels: String? = nil) async -> Double {
        var total = 0.0
        for url in verifierMetrics {
            guard let (data, _) = try? await URLSession.shared.data(from: URL(string: url)!) else { continue }
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
                let name = line.prefix { $0 != "{" && $0 != " " }
                if name == metric, labels.map(line.contains) ?? true, let value = line.split(separator: " ").last.flatMap({ Double($0) }) { total += value }
            }
        }
        return total
    }
}
