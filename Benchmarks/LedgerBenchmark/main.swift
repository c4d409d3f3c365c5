// Ledger write speed: group commit with synchronous=FULL, through the real
// storekeeper-ledger process and its ZeroMQ endpoint.
//
// Phase 1 (latency at low load): one request at a time, one transaction each;
// prints the median and p99 of the answered record.
// Phase 2 (throughput): --concurrency requests in flight, each recording
// --transactions fresh transactions, --requests in all; prints recorded
// transactions per second, requests per second and the ledger's memory.
// Prints figures; asserts nothing.
//
//   swift build -c release && .build/release/storekeeper-bench-ledger --requests 20000 --transactions 10
import ArgumentParser
import BenchmarkSupport
import Contracts
import Foundation
import LedgerClient
import Logging
import ProcessSpawn
import ZeroMQ

/// Parsed only (`parseOrExit`): the benchmark below is top-level code, not `run()`.
struct Options: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "storekeeper-bench-ledger")

    @Option(help: "Requests in the throughput phase.") var requests = 20_000
    @Option(help: "Fresh transactions each request records.") var transactions = 10
    @Option(help: "Requests in flight in the throughput phase.") var concurrency = 256
    @Option(help: "Requests one at a time in the latency phase.") var latencySamples = 2_000
    @Flag(help: "Each request's transactions are renewals of one subscription (an iOS 7 receipt) instead of one-off purchases.")
    var renewals = false
    @Option(help: "Measure a ledger already running there instead of a fresh one.") var ledgerEndpoint: String?
    @Option(help: "The ledger on PostgreSQL instead of SQLite: a throw-away database on this URL's server.")
    var databaseURL: String?
    @Option(help: "Ledgers started on that database; requests go round-robin over them.") var ledgers = 1
    @Option(help: "Where the storekeeper executables are.") var binDir = URL(fileURLWithPath: CommandLine.arguments[0])
        .deletingLastPathComponent().path

    func validate() throws {
        guard ledgers >= 1 else { throw ValidationError("--ledgers must be at least 1") }
        guard ledgers == 1 || databaseURL != nil else { throw ValidationError("--ledgers N needs --database-url") }
    }
}

func request(_ prefix: String, _ index: Int, transactions: Int, renewals: Bool = false) -> RecordRequest {
    RecordRequest.with {
        $0.userID = "bench-\(index % 1_000)"
        $0.result = VerifyResult.with {
            $0.environment = .production
            $0.style = .ios7
            $0.bundleID = "com.example.bench"
            $0.transactions = (0..<transactions).map { item in
                Transaction.with {
                    $0.transactionID = "\(prefix)-\(index)-\(item)"
                    $0.originalTransactionID = renewals ? "\(prefix)-\(index)-0" : "\(prefix)-\(index)-\(item)"
                    $0.productID = renewals ? "com.example.pro.monthly" : "com.example.coins"
                    $0.quantity = 1
                    $0.purchaseDateMs = 1_574_316_980_000 + Int64(item) * 2_592_000_000
                    if renewals { $0.expiresDateMs = $0.purchaseDateMs + 2_592_000_000 }
                }
            }
        }
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

let options = Options.parseOrExit()
let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-ledger-\(UUID().uuidString)").path
let ports = freePorts(3 + options.ledgers)
let endpoints = options.ledgerEndpoint.map { [$0] } ?? (0..<options.ledgers).map { "tcp://127.0.0.1:\(ports[3 + $0])" }
var database: ThrowawayDatabase?
if let url = options.databaseURL { database = try await ThrowawayDatabase.create(on: url) }
let ledgerProcesses = options.ledgerEndpoint != nil ? [] : try endpoints.enumerated().map { index, endpoint in
    try start(
        "storekeeper-ledger",
        [
            "STOREKEEPER_DATA_DIR": dataDirectory, "STOREKEEPER_LEDGER_ENDPOINT": endpoint,
            "STOREKEEPER_REPLAY_ENDPOINT": "tcp://127.0.0.1:\(ports[0])",
            "STOREKEEPER_EVENTS_ENDPOINT": "tcp://127.0.0.1:\(ports[1])",
            "STOREKEEPER_REFRESH_ENDPOINT": "tcp://127.0.0.1:\(ports[2])", "STOREKEEPER_REFRESH_PER_MINUTE": "0",
        ].merging(database.map { ["STOREKEEPER_DATABASE_URL": $0.urlText] } ?? [:]) { $1 }, binDir: options.binDir)
}
func stopLedgers() {
    for ledger in ledgerProcesses { ledger.terminateAndWait() }
    try? FileManager.default.removeItem(atPath: dataDirectory)
}
defer { stopLedgers() }

let client = LedgerClient(context: ZMQContext(), endpoints: endpoints, logger: Logger(label: "bench"))
let runner = Task { try await client.run() }
var ready = false
for _ in 0..<100 where !ready { ready = await client.ping() }
guard ready else { fatalError("the ledger did not answer pings") }
let idleKiB = ledgerProcesses.map { residentKiB($0.pid) }.reduce(0, +)

// Phase 1: latency, one at a time.
var latencies: [Double] = []
for index in 0..<options.latencySamples {
    let started = ContinuousClock.now
    _ = try await client.record(request("lat", index, transactions: 1), requestID: "lat-\(index)")
    latencies.append(seconds(ContinuousClock.now - started) * 1_000)
}
latencies.sort()
print(
    String(
        format: "latency, one request at a time (%d samples, 1 transaction each): median %.2f ms, p99 %.2f ms",
        latencies.count, latencies[latencies.count / 2], latencies[latencies.count * 99 / 100]))

// Phase 2: throughput with many in flight.
let cpuBefore = ledgerProcesses.map { cpuSeconds($0.pid) }.reduce(0, +)
let started = ContinuousClock.now
let granted = try await withThrowingTaskGroup(of: Int.self) { group in
    var next = 0
    var granted = 0
    func submit(_ index: Int) {
        group.addTask {
            try await client.record(request("thr", index, transactions: options.transactions, renewals: options.renewals), requestID: "thr-\(index)")
                .granted.count
        }
    }
    while next < min(options.concurrency, options.requests) {
        submit(next)
        next += 1
    }
    while let count = try await group.next() {
        granted += count
        if next < options.requests {
            submit(next)
            next += 1
        }
    }
    return granted
}
let elapsed = seconds(ContinuousClock.now - started)
let peakKiB = ledgerProcesses.map { residentKiB($0.pid) }.reduce(0, +)
let ledgerCPU = ledgerProcesses.map { cpuSeconds($0.pid) }.reduce(0, +) - cpuBefore
print(
    String(
        format:
            "throughput (%d requests x %d %@, %d in flight): %.2f s, %.0f recorded transactions/s, %.0f requests/s",
        options.requests, options.transactions, options.renewals ? "renewals" : "one-off purchases", options.concurrency, elapsed, Double(granted) / elapsed,
        Double(options.requests) / elapsed))
print(
    String(
        format: "granted %d of %d; ledger CPU %.2f s (%.0f%% of one core); ledger RSS idle %d MB, after %d MB", granted,
        options.requests * options.transactions, ledgerCPU, ledgerCPU / elapsed * 100, idleKiB / 1024, peakKiB / 1024))
runner.cancel()
// The ledgers first: dropping their database under them would only fill the log.
stopLedgers()
await database?.drop()
