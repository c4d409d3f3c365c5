// Verifier throughput and memory against a slow App Store.
//
// Starts storekeeper-sim (every Apple answer delayed by --latency-ms) and one
// storekeeper-verifier, mints --requests receipts, sends them all at once
// through an in-process pool client, and prints: peak requests in flight in
// the verifier, wall time, and the verifier's resident memory idle and at
// peak (so memory per in-flight request). Prints figures; asserts nothing.
//
//   swift build -c release && .build/release/storekeeper-bench-verifier --requests 2000 --latency-ms 3000
//
// With --jws, no process: signed transactions verified per second in this
// process with the chain cached (JWSThroughput.swift), --requests of them.
//
//   .build/release/storekeeper-bench-verifier --jws --requests 200000
import ArgumentParser
import BenchmarkSupport
import Contracts
import Foundation
import Logging
import ProcessSpawn
import Timekeeping
import VerifierPool
import ZeroMQ

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Parsed only (`parseOrExit`): the benchmark below is top-level code, not `run()`.
struct Options: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "storekeeper-bench-verifier")

    @Option(help: "Receipts minted and verified at once (with --jws: signed transactions verified).") var requests = 2_000
    @Option(help: "The simulated App Store's delay per answer, in milliseconds.") var latencyMs = 3_000
    @Option(help: "Where the storekeeper executables are.") var binDir = URL(fileURLWithPath: CommandLine.arguments[0])
        .deletingLastPathComponent().path
    @Flag(help: "No process: signed transactions verified per second in this one, the chain cached.") var jws = false
}

func post(_ url: String, _ body: [String: Any]) async throws -> [String: Any] {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = "POST"
    request.httpBody = try JSONSerialization.data(withJSONObject: body)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    let (data, _) = try await URLSession.shared.data(for: request)
    return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
}

let options = Options.parseOrExit()
if options.jws {
    try await JWSThroughput.run(count: options.requests)
    exit(0)
}
let simPort = freePort()
let sim = "http://127.0.0.1:\(simPort)"
let poolEndpoint = "tcp://127.0.0.1:\(freePort())"
let simulator = try start("storekeeper-sim", ["STOREKEEPER_SIM_ADDR": "127.0.0.1:\(simPort)"], binDir: options.binDir)
defer { simulator.signal(SIGTERM) }
for _ in 0..<100 {
    if (try? await URLSession.shared.data(from: URL(string: sim + "/healthz")!)) != nil { break }
    try await Task.sleep(for: .milliseconds(100))
}
var receipts: [String] = []
for index in 0..<options.requests {
    let answer = try await post(
        sim + "/admin/purchases",
        ["account": "bench-\(index)", "product_id": "com.example.gems", "type": "consumable", "environment": "production"])
    receipts.append(answer["receipt_data"] as? String ?? "")
}
_ = try await post(sim + "/admin/faults/production", ["latency_min_ms": options.latencyMs, "latency_max_ms": options.latencyMs])

let client = VerifierPoolClient(context: ZMQContext(), endpoint: poolEndpoint, logger: Logger(label: "bench"))
let pool = Task { try await client.run() }
let verifier = try start(
    "storekeeper-verifier",
    [
        "STOREKEEPER_VERIFIER_ENDPOINT": poolEndpoint, "STOREKEEPER_APPLE_PRODUCTION_URL": sim + "/production/verifyReceipt",
        "STOREKEEPER_APPLE_SANDBOX_URL": sim + "/sandbox/verifyReceipt", "STOREKEEPER_VERIFIER_MAX_IN_FLIGHT": "4096",
    ], binDir: options.binDir)
defer { verifier.signal(SIGTERM) }
while client.workerCount == 0 { try await Task.sleep(for: .milliseconds(50)) }
try await Task.sleep(for: .milliseconds(500))
let idleKiB = residentKiB(verifier.pid)

let started = ContinuousClock.now
let sampler = Task {
    var peakInFlight = 0
    var peakKiB = 0
    while !Task.isCancelled {
        peakInFlight = max(peakInFlight, client.inFlightCount)
        peakKiB = max(peakKiB, residentKiB(verifier.pid))
        try? await Task.sleep(for: .milliseconds(50))
    }
    return (peakInFlight, peakKiB)
}
let succeeded = await withTaskGroup(of: Bool.self) { group in
    for (index, receipt) in receipts.enumerated() {
        group.addTask {
            var request = VerifyRequest()
            request.receiptData = receipt
            let deadline = WallClock.system.deadline(after: .seconds(60))
            let answer = try? await client.verify(
                Envelope(requestID: "bench-\(index)", deadlineMilliseconds: deadline, body: .verifyRequest(request)))
            if case .verifyResult = answer?.body { return true }
            return false
        }
    }
    var count = 0
    for await ok in group where ok { count += 1 }
    return count
}
let wall = ContinuousClock.now - started
sampler.cancel()
let (peakInFlight, peakKiB) = await sampler.value
pool.cancel()
_ = await pool.result

print("requests:                 \(options.requests) (Apple latency \(options.latencyMs) ms)")
print("succeeded:                \(succeeded)")
print("peak in flight (verifier): \(peakInFlight)")
print("wall time:                \(wall)")
print("throughput:               \(String(format: "%.0f", Double(succeeded) / (Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18))) verifications/s")
print("verifier RSS idle / peak: \(idleKiB) KiB / \(peakKiB) KiB")
print("memory per in-flight:     \(peakInFlight > 0 ? (peakKiB - idleKiB) * 1_024 / peakInFlight : 0) bytes")
