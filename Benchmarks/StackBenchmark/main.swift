// The whole stack under load: simulator, ledger, verifiers and gateway as
// real processes on this machine, driven through POST /v1/receipts by an
// in-process SwiftNIO load generator. Prints a table; asserts nothing.
//
//   ceiling   the load generator against the simulator's verifyReceipt alone
//   (a)       simulator answering at once, closed loop: the stack's maximum throughput
//   (b)       open loop at --rate: first with Apple at exactly 3 s, the simulator alone
//             and then the stack, each printed as its latency over 3 s (the difference
//             is what the stack adds); then Apple at once, for its CPU line; then
//             Apple at 3 s ± 1 s: what the stack sustains
//   (d)       a burst of 1,000 identical receipts at once (Apple at 1 s): how many Apple calls
//   (c), the ledger alone, is storekeeper-bench-ledger.
//
//   --compare-stores URL     instead: (a) on SQLite and on PostgreSQL (a throw-away database
//                            on URL's server), alternating, twice each
//   --compare-receipt-modes  instead: (a) with receipts read by verifyReceipt and by the
//                            App Store Server API, alternating, twice each
//   --compare-transports     instead: (a) with ZeroMQ over TCP loopback and over ipc://, alternating, twice each
//   --peers DIR              instead: Storekeeper against the peers in DIR (bench/peers), alternating,
//                            --rounds times (PeerComparison.swift; --peer-rate, --flask-rate, --flask-requests,
//                            --in-flight, --latency-rates, --latency-out DIR, --contenders asyncio_server,storekeeper,swift_floor,flask_inapppy;
//                            swift_floor is storekeeper-bench-floor, Benchmarks/FloorServer)
//
//   --apple-tls              Storekeeper's verifiers (and the floor) call the simulator over TLS on its
//                            STOREKEEPER_SIM_TLS_ADDR, HTTP/2 agreed by ALPN, as production calls Apple
//
//   swift build -c release && .build/release/storekeeper-bench-stack
import ArgumentParser
import BenchmarkSupport
import Foundation
import NIOCore
import StorekeeperCore

// As in the services: the generator's tasks run on the event loops its connections use.
EventLoopExecutor.install()

/// Parsed only (`parseOrExit`): the benchmark below is top-level code, not `run()`.
struct Options: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "storekeeper-bench-stack")

    @Option(help: "Requests of the closed loop (a).") var requests = 20_000
    @Option(help: "Requests in flight in the closed loop.") var concurrency = 64
    @Option(help: "Requests per second of the open loop (b).") var rate = 2_000.0
    @Option(help: "Seconds of each open loop.") var seconds = 10.0
    @Option(help: "Verifier processes.") var verifiers = 2
    @Flag(help: "Skip the open loop (b).") var skipOpenLoop = false
    @Option(help: "A PostgreSQL server: run (a) on each store in turn instead of the scenarios.")
    var compareStores: String?
    @Flag(help: "Run (a) with receipts read by verifyReceipt and by the App Store Server API instead.")
    var compareReceiptModes = false
    @Flag(help: "Run (a) with ZeroMQ over TCP loopback and over ipc:// socket files instead.")
    var compareTransports = false
    @Option(help: "How Storekeeper's processes reach each other in --peers: tcp (loopback) or ipc (socket files).")
    var transport = ZeroMQTransport.tcp
    @Option(help: "The peers' directory (bench/peers): compare Storekeeper with them instead of the scenarios.")
    var peers: String?
    @Option(help: "Alternating rounds of --peers.") var rounds = 3
    @Option(help: "The Flask peer's open-loop rate (it serves tens a second with Apple at 3 s).") var flaskRate = 40.0
    @Option(help: "The Flask peer's closed-loop requests.") var flaskRequests = 4_000
    @Option(help: "Verifications held in flight at once for the peak RSS line of --peers.") var inFlight = 10_000
    @Option(
        help: "--peers' (c): open-loop rates at which to measure the latency each server adds (comma-separated).",
        transform: { try commaSeparatedRates($0) })
    var latencyRates = [700.0]
    @Option(help: "--peers' (c): also write every request's latency over 3 s to a file per round, server and rate here.")
    var latencyOut: String?
    @Option(
        help: "--peers' open loop (b): rates offered in turn, rising (comma-separated); each server runs them until the first it does not keep up with.",
        transform: { text in
            let rising = try commaSeparatedRates(text)
            guard !rising.isEmpty, zip(rising, rising.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw ValidationError("--peer-rate: one rate or more, rising")
            }
            return rising
        })
    var peerRate: [Double] = [1_000, 1_250, 1_500, 1_750, 2_000, 2_250, 2_500, 2_750, 3_000]
    @Option(
        help: "--peers' open loop (b): after the first rate a server misses with no rate of its own (failed, backlogged), this many more, each half way across what is left of the bracket.",
        transform: { text in
            guard let count = Int(text), count >= 0 else { throw ValidationError("--halvings: a whole number, 0 or more") }
            return count
        })
    var halvings = 2
    @Option(
        help: "Which of --peers' servers run, in this order (comma-separated).",
        transform: { $0.split(separator: ",").map(String.init) })
    var contenders = PeerComparison.order
    @Flag(help: "Servers that can (Storekeeper's verifiers, the floor) call the simulator over TLS and HTTP/2, as Apple.")
    var appleTLS = false
    @Option(help: "Where the storekeeper executables are.") var binDir = URL(fileURLWithPath: CommandLine.arguments[0])
        .deletingLastPathComponent().path
}

/// "700,1400" → [700, 1400]; each a positive rate.
func commaSeparatedRates(_ text: String) throws -> [Double] {
    try text.split(separator: ",").map { guard let rate = Double($0), rate > 0 else { throw ValidationError("not a rate: \($0)") }; return rate }
}

/// One row of the table; `rate` is an open loop's offered rate.
func row(_ name: String, _ summary: LoadSummary, rate: Double? = nil, extra: String = "") -> String {
    let cells = [
        name.padding(toLength: 34, withPad: " ", startingAt: 0), String(summary.count), String(summary.succeeded),
        fixed(summary.perSecond, 0), fixed(summary.percentile(0.5).milliseconds, 1),
        fixed(summary.percentile(0.9).milliseconds, 1), fixed(summary.percentile(0.99).milliseconds, 1),
        fixed(summary.percentile(1).milliseconds, 1),
    ]
    var extras = extra.isEmpty ? [] : [extra]
    if let backlog = summary.backlog, let rate {
        let growth = "latency grew \(fixed(backlog.drift.milliseconds, 0)) ms over \(fixed(backlog.span.seconds, 1)) s"
        extras.append(
            backlog.keptUp
                ? "kept up (\(growth))"
                : "fell behind (\(growth)): served about \(fixed(backlog.served(offered: rate), 0))/s")
    }
    return cells.joined(separator: " | ") + " | " + summary.errors + extras.map { " | " + $0 }.joined()
}

/// Where a scenario's CPU went, per verification: the profile in one line.
func cpuLine(_ scenario: String, _ cpu: [(name: String, seconds: Double)], switches: Int, verifications: Int) -> String {
    let perRequest = cpu.map { "\($0.name) \(fixed(1_000 * $0.seconds / Double(verifications), 3))" }
    let storekeeper = cpu.filter { !BenchStack.harness.contains($0.name) }.map(\.seconds).reduce(0, +)
    return "\(scenario) CPU ms per verification: " + perRequest.joined(separator: ", ")
        + "; Storekeeper together \(fixed(1_000 * storekeeper / Double(verifications), 3))"
        + ", its context switches \(fixed(Double(switches) / Double(verifications), 1))"
}

/// What the simulator and the generator alone cost per request at `rate`,
/// and so the most CPU per verification that can be left to Storekeeper's
/// processes on this machine at that rate. Measured on production receipts
/// (one Apple call each), so a little generous for (b)'s mix.
func budgetLine(rate: Double, _ cpu: [(name: String, seconds: Double)], requests: Int) -> String {
    let harness = cpu.filter { BenchStack.harness.contains($0.name) }
    let perRequest = harness.map(\.seconds).reduce(0, +) * 1_000 / Double(requests)
    let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
    let left = cores * 1_000 / rate - perRequest
    return "(b) simulator alone, Apple exactly 3 s at \(Int(rate))/s CPU ms per request: "
        + harness.map { "\($0.name) \(fixed(1_000 * $0.seconds / Double(requests), 3))" }.joined(separator: ", ")
        + "; at \(Int(rate))/s that leaves Storekeeper \(fixed(left, 3)) ms per verification on \(Int(cores)) cores"
}

let options = Options.parseOrExit()
// The generator opens thousands of connections, as the services accept them: it grows its descriptor
// table at start as they do (DescriptorTable), so its own growth stalls are not charged to a server.
OpenFileLimit.raiseForConnections()
if let peers = options.peers {
    try await PeerComparison.run(options, peersDirectory: peers)
    exit(0)
}
if let serverURL = options.compareStores {
    try await SideBySide.run(options, SideBySide.stores(options, serverURL: serverURL)).forEach { print($0) }
    exit(0)
}
if options.compareReceiptModes {
    try await SideBySide.run(options, SideBySide.receiptModes(options)).forEach { print($0) }
    exit(0)
}
if options.compareTransports {
    try await SideBySide.run(options, SideBySide.transports(options)).forEach { print($0) }
    exit(0)
}
let stack = try await BenchStack.start(
    binDir: options.binDir, verifiers: options.verifiers, appleTLS: options.appleTLS)
// Interrupted (Ctrl-C, kill): stop the stack's processes before leaving, or they outlive the benchmark.
let interruptions = [SIGINT, SIGTERM].map { number in
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number)
    source.setEventHandler {
        stack.stop()
        exit(130)
    }
    source.resume()
    return source
}
do {
    let simulator = HTTPLoadClient(host: "127.0.0.1", port: stack.simPort)
    let gateway = HTTPLoadClient(host: "127.0.0.1", port: stack.gatewayPort)
    @Sendable func setLatency(_ low: Int, _ high: Int) async throws {
        for environment in ["production", "sandbox"] {
            _ = try await simulator.send(
                .POST, "/admin/faults/\(environment)", json: try Workload.json(["latency_min_ms": low, "latency_max_ms": high]))
        }
    }
    @Sendable func post(_ body: ByteBuffer) async -> String {
        outcome(of: await attempt { try await gateway.send(.POST, "/v1/receipts", json: body) })
    }

    var lines: [String] = []
    print("minting receipts in the simulator ...")
    let openCount = options.skipOpenLoop ? 0 : Int(options.rate * options.seconds)
    let minted = try await Workload.mint(options.requests + 3 * openCount + 1, prefix: "bench", simulator: simulator)
    let closedBodies = try Workload.receiptBodies(Array(minted[0..<options.requests]))

    // Ceiling: the same generator, the same receipts, straight to the simulator (production consumables).
    let ceilingBodies = try minted[0..<options.requests].enumerated().filter { $0.offset % 10 != 9 }.map {
        try Workload.json(["receipt-data": $0.element, "password": BenchStack.secret])
    }
    let ceiling = try await ClosedLoop.run(count: ceilingBodies.count, concurrency: options.concurrency) { index in
        outcome(of: await attempt { try await simulator.send(.POST, "/production/verifyReceipt", json: ceilingBodies[index]) })
    }
    lines.append(row("ceiling: simulator alone", ceiling))

    // (a)
    let appleBefore = await stack.verifierTotal("storekeeper_apple_request_duration_seconds_count")
    let (cpuBefore, switchesBefore) = (stack.cpuSeconds(), stack.storekeeperContextSwitches())
    let closed = try await ClosedLoop.run(count: closedBodies.count, concurrency: options.concurrency) { index in
        await post(closedBodies[index])
    }
    let cpuA = stack.cpuSeconds(since: cpuBefore)
    let appleCallsA = await stack.verifierTotal("storekeeper_apple_request_duration_seconds_count") - appleBefore
    lines.append(row("(a) closed loop, \(options.concurrency) in flight", closed,
        extra: "\(fixed(100 * closed.perSecond / ceiling.perSecond, 0)) % of ceiling; \(Int(appleCallsA)) Apple calls"))
    var cpuLines = [
        cpuLine("(a)", cpuA, switches: stack.storekeeperContextSwitches() - switchesBefore, verifications: closed.count)
    ]

    // (d) a burst of identical receipts while Apple takes a second.
    try await setLatency(1_000, 1_000)
    let burstBody = try Workload.json(["user_id": "burst-user", "receipt_data": minted[minted.count - 1]])
    let appleBeforeBurst = await stack.verifierTotal("storekeeper_apple_request_duration_seconds_count")
    let coalescedBefore = await stack.verifierTotal("storekeeper_verifier_coalesced_total")
    let grants = SharedCounter()
    let burst = try await ClosedLoop.run(count: 1_000, concurrency: 1_000) { _ in
        let result = await attempt { try await gateway.send(.POST, "/v1/receipts", json: burstBody) }
        if case .success(let answer) = result,
            let object = try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView)) as? [String: Any]
        {
            grants.increment(by: (object["granted"] as? [Any])?.count ?? 0)
        }
        return outcome(of: result)
    }
    let burstCalls = await stack.verifierTotal("storekeeper_apple_request_duration_seconds_count") - appleBeforeBurst
    let burstCoalesced = await stack.verifierTotal("storekeeper_verifier_coalesced_total") - coalescedBefore
    lines.append(row("(d) burst: 1,000 identical at once", burst,
        extra: "\(Int(burstCalls)) Apple calls, \(Int(burstCoalesced)) coalesced, granted \(grants.current) time(s)"))

    // (b)
    if openCount > 0 {
        /// Runs one open-loop phase of `count` verifications and notes where its CPU went.
        func measured(_ label: String, count: Int, _ phase: () async -> LoadSummary) async -> LoadSummary {
            let (cpu, switches) = (stack.cpuSeconds(), stack.storekeeperContextSwitches())
            let summary = await phase()
            cpuLines.append(
                cpuLine(label, stack.cpuSeconds(since: cpu), switches: stack.storekeeperContextSwitches() - switches,
                    verifications: count))
            return summary
        }
        let offset = options.requests
        // Latency first, while the stack is fresh: after the overloaded run below, the gateway closes
        // its thousands of idle connections together, and that (Hummingbird's task group, see
        // bench/README.md) would land in whichever phase came next.
        // Production consumables only here: one Apple call of exactly 3 s each, so latency − 3 s is what the stack adds.
        // Workload.mint makes every tenth receipt (by its index in `minted`) a sandbox subscription.
        let consumables = (offset + openCount..<offset + 3 * openCount).filter { $0 % 10 != 9 }
        let (exactIndices, onceIndices) = (consumables.prefix(consumables.count / 2), consumables.suffix(consumables.count / 2))
        let exact = try exactIndices.map { try Workload.json(["user_id": "u-\($0 % 5_000)", "receipt_data": minted[$0]]) }
        try await setLatency(3_000, 3_000)
        // The simulator's own share first: its 3 s timers are not exact, and what they add is not the stack's.
        let direct = try exactIndices.map { try Workload.json(["receipt-data": minted[$0], "password": BenchStack.secret]) }
        let cpuBeforeOwn = stack.cpuSeconds()
        var own = await OpenLoop.run(count: direct.count, rate: options.rate) { index in
            outcome(of: await attempt { try await simulator.send(.POST, "/production/verifyReceipt", json: direct[index]) })
        }
        own.latencies = own.latencies.map { $0 - .seconds(3) }
        cpuLines.append(budgetLine(rate: options.rate, stack.cpuSeconds(since: cpuBeforeOwn), requests: direct.count))
        var added = await measured("(b) Apple exactly 3 s at \(Int(options.rate))/s", count: exact.count) {
            await OpenLoop.run(count: exact.count, rate: options.rate) { await post(exact[$0]) }
        }
        added.latencies = added.latencies.map { $0 - .seconds(3) }

        // The same rate with Apple answering at once: few requests in flight, yet requests come one
        // at a time, so every hop between threads is a wake-up (compare its CPU line with (a)'s).
        let once = try onceIndices.map { try Workload.json(["user_id": "u-\($0 % 5_000)", "receipt_data": minted[$0]]) }
        try await setLatency(0, 0)
        let atOnce = await measured("(b) Apple at once at \(Int(options.rate))/s", count: once.count) {
            await OpenLoop.run(count: once.count, rate: options.rate) { await post(once[$0]) }
        }

        let jittered = try Workload.receiptBodies(Array(minted[offset..<offset + openCount]))
        try await setLatency(2_000, 4_000)
        let sustained = await measured("(b) Apple 3 s ± 1 s at \(Int(options.rate))/s", count: openCount) {
            await OpenLoop.run(count: openCount, rate: options.rate) { await post(jittered[$0]) }
        }
        lines.append(row("(b) \(Int(options.rate))/s open loop, Apple 3 s ± 1 s", sustained, rate: options.rate))
        lines.append(row("(b) simulator alone at 3 s: over 3 s", own, rate: options.rate))
        lines.append(row("(b) same, Apple exactly 3 s: over 3 s", added, rate: options.rate))
        lines.append(row("(b) same rate, Apple at once", atOnce, rate: options.rate))
    }

    let header = ["scenario".padding(toLength: 34, withPad: " ", startingAt: 0), "requests", "ok", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors"]
    print(header.joined(separator: " | "))
    lines.forEach { print($0) }
    cpuLines.forEach { print($0) }
    let peaks = stack.peakKiB()
    print("peak RSS: " + peaks.map { "\($0.name) \($0.kib / 1_024) MiB" }.joined(separator: ", "))
    let storekeeper = peaks.filter { !BenchStack.harness.contains($0.name) }.map(\.kib).reduce(0, +)
    print("peak RSS of the Storekeeper processes together: \(storekeeper / 1_024) MiB")
    print("Apple calls in all: \(Int(await stack.verifierTotal("storekeeper_apple_request_duration_seconds_count"))), coalesced requests: \(Int(await stack.verifierTotal("storekeeper_verifier_coalesced_total")))")
    let handOffs = "storekeeper_verifier_ledger_handoffs_total"
    var outcomes: [String] = []
    for outcome in ["handed_over", "answered", "other_ledgers"] {
        outcomes.append("\(outcome) \(Int(await stack.verifierTotal(handOffs, labels: "\"\(outcome)\"")))")
    }
    // A receipt handed to the ledger skips the gateway's hop (docs/verifier-pool.md).
    print("ledger hand-overs asked for: " + outcomes.joined(separator: ", "))
    print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_048_576) MiB")
    await gateway.shutdown()
    await simulator.shutdown()
    stack.stop()
} catch {
    // Children outlive a crash: stop them first.
    stack.stop()
    FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
    exit(1)
}
