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
import BenchmarkSupport
import Contracts
import Foundation
import LedgerClient
import Logging
import ZeroMQ

struct Options {
    var requests = 20_000
    var transactions = 10
    var concurrency = 256
    var latencySamples = 2_000
    /// Each request's transactions are renewals of one subscription (an iOS 7
    /// receipt) instead of separate one-off purchases.
    var renewals = false
    /// A ledger already running there is measured instead of a fresh one.
    var ledgerEndpoint: String?
    /// The ledger on PostgreSQL instead of SQLite: a throw-away database on this URL's server.
    var databaseURL: String?
    /// Ledgers started on that database; requests go round-robin over them.
    var ledgers = 1
    var binDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path

    init() {
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let flag = arguments.next() {
            if flag == "--renewals" {
                renewals = true
                continue
            }
            let value = arguments.next() ?? ""
            switch flag {
            case "--requests": requests = Int(value) ?? requests
            case "--transactions": transactions = Int(value) ?? transactions
            case "--concurrency": concurrency = Int(value) ?? concurrency
            case "--latency-samples": latencySamples = Int(value) ?? latencySamples
            case "--bin-dir": binDir = value
            case "--ledger-endpoint": ledgerEndpoint = value
            case "--database-url": databaseURL = value
            case "--ledgers": ledgers = max(1, Int(value) ?? ledgers)
            default: FileHandle.standardError.write(Data("unknown flag \(flag)\n".utf8)); exit(64)
            }
        }
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

let options = Options()
let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-ledger-\(UUID().uuidString)").path
let ports = freePorts(3 + options.ledgers)
let endpoints = options.ledgerEndpoint.map { [$0] } ?? (0..<options.ledgers).map { "tcp://127.0.0.1:\(ports[3 + $0])" }
if options.ledgers > 1, options.databaseURL == nil { fatalError("--ledgers N needs --database-url") }
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
    for ledger in ledgerProcesses where ledger.isRunning {
        ledger.terminate()
        ledger.waitUntilExit()
    }
    try? FileManager.default.removeItem(atPath: dataDirectory)
}
defer { stopLedgers() }

let client = LedgerClient(context: ZMQContext(), endpoints: endpoints, logger: Logger(label: "bench"))
let runner = Task { try await client.run() }
var ready = false
for _ in 0..<100 where !ready { ready = await client.ping() }
guard ready else { fatalError("the ledger did not answer pings") }
let idleKiB = ledgerProcesses.map { residentKiB($0.processIdentifier) }.reduce(0, +)

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
let cpuBefore = ledgerProcesses.map { cpuSeconds($0.processIdentifier) }.reduce(0, +)
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
let peakKiB = ledgerProcesses.map { residentKiB($0.processIdentifier) }.reduce(0, +)
let ledgerCPU = ledgerProcesses.map { cpuSeconds($0.processIdentifier) }.reduce(0, +) - cpuBefore
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
