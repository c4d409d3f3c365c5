// Storekeeper against the servers people write instead (issue 20), in one run:
// the same simulator, this generator and the same mix of receipts for each server,
// one after the other, round after round, so the machine's drift shows
// between rounds rather than between servers. Each server gets a fresh
// database and receipts minted for it alone.
//
//   --peers DIR   DIR/NAME/run starts a peer: a server of POST /v1/receipts that
//                 reads the same STOREKEEPER_* variables (bench/peers/README.md)
//
// For each server and round:
//   (a)  Apple at once, closed loop with --concurrency in flight: successful answers/s
//   (b)  Apple at 3 s ± 1 s, open loop for --seconds at each of --peer-rate in turn (--flask-rate
//        for the Flask peer), until it no longer keeps up (LoadSummary.Backlog), then --halvings
//        rates half way across the bracket that left (RateSearch): the rate it sustains lies
//        between the highest rate it kept up with and the lowest it missed (SustainedRate)
//   (c)  Apple at exactly 3 s, open loop at each --latency-rates for --seconds: the latency the server adds
//        to the simulator alone at the same rate (production consumables only: one Apple call each)
//   RSS  on a server started afresh for it: --in-flight verifications sent over 6 s while Apple
//        takes 6 s, so that at the end all of them are in flight at once (not for the Flask peer: it holds 40)
// Each server gets a simulator of its own, started afresh, for (a)-(c) and again for RSS.
import BenchmarkSupport
import Foundation
import NIOCore
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server under test: its port and its processes.
struct Contender: Sendable {
    let name: String
    let port: Int
    /// Its processes now (a peer's workers are found below its first process).
    let processes: @Sendable () -> [Int32]
    let stop: @Sendable () -> Void
}

/// A peer (`DIR/run`, or the floor server), given the variables Storekeeper reads, on a free port and a data
/// directory of its own.
struct PeerServer: Sendable {
    let process: Process
    let port: Int
    let dataDirectory: String

    static func start(_ executable: URL, apple: AppleLink) async throws -> PeerServer {
        let port = freePort()
        let process = Process()
        process.executableURL = executable
        let dataDirectory = NSTemporaryDirectory() + "storekeeper-peer-\(UUID().uuidString)"
        process.environment = [
            // bench.sh puts the peers' virtual environment first.
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "STOREKEEPER_HTTP_ADDR": "127.0.0.1:\(port)",
            "STOREKEEPER_DATA_DIR": dataDirectory,
            "STOREKEEPER_APPLE_SHARED_SECRET": BenchStack.secret,
            "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
        ].merging(apple.clientEnvironment) { $1 }
        try process.run()
        let peer = PeerServer(process: process, port: port, dataDirectory: dataDirectory)
        for _ in 0..<300 {
            if try await ready(port) {
                // Every worker started, not just the first.
                try await Task.sleep(for: .seconds(1))
                return peer
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        peer.stop()
        throw BenchStack.NotReady()
    }

    /// Whether GET /readyz answers 200.
    private static func ready(_ port: Int) async throws -> Bool {
        guard let (_, response) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/readyz")!)
        else { return false }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    func stop() {
        let tree = processTree(process.processIdentifier)
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        // Workers their parent left behind.
        for pid in tree.dropFirst() where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}

/// What one server did in one round.
/// (c) at one rate: what the server's latency adds to the simulator's own.
struct AddedLatency {
    let rate: Double
    let simulator: LoadSummary
    let server: LoadSummary

    func added(_ fraction: Double) -> Double {
        (server.percentile(fraction) - simulator.percentile(fraction)).milliseconds
    }
    /// "+p50 / +p99 ms", or why there is none.
    var text: String {
        guard server.succeeded == server.count, simulator.succeeded == simulator.count else {
            return "? (\(server.count - server.succeeded) failed)"
        }
        return "+\(fixed(added(0.5), 1)) / +\(fixed(added(0.99), 1)) ms"
    }
}

/// (b) at one offered rate.
struct OpenStep {
    let rate: Double
    let summary: LoadSummary
    /// CPU ms per verification: the server's processes, the simulator, the generator.
    let cpu: (server: Double, sim: Double, generator: Double)
    /// Before a halving step: how long the server and the simulator took to go idle first.
    var settled: IdleWait?

    var outcome: RateStepOutcome {
        RateStepOutcome(summary, offered: rate, slowest: .milliseconds(PeerComparison.openLatencyMs.high))
    }
}

struct PeerRun {
    let name: String
    let round: Int
    let closed: LoadSummary
    /// CPU ms per verification: the server's processes, the simulator, the generator.
    let closedCPU: (server: Double, sim: Double, generator: Double)
    /// (b), rate by rate, up to the first it did not keep up with.
    let open: [OpenStep]
    /// Measured on a server started for it (`measureInFlight`).
    var inFlight: LoadSummary?
    /// (c): per rate, the simulator alone and the server, each less Apple's 3 s.
    let latency: [AddedLatency]
    /// The most resident memory its processes held together while --in-flight verifications were under way.
    var inFlightRSSKiB: Int
    /// The sum of its processes' peaks over the whole run, the overloaded open loop included.
    let peakRSSKiB: Int

    var closedRate: Double { Double(closed.succeeded) / closed.wall.seconds }
    var sustained: SustainedRate { SustainedRate(steps: open.map { ($0.rate, $0.outcome) }) }
    /// (b)'s CPU figure: at the highest rate it kept up with, else at the one rate it ran.
    var openCPU: (server: Double, sim: Double, generator: Double) {
        (open.filter { $0.outcome == .keptUp }.max { $0.rate < $1.rate } ?? open[0]).cpu
    }
}

/// One server and its simulator, started for one part of a round, with the generator's client to each.
struct PeerSession: Sendable {
    let contender: Contender
    let simulator: HTTPLoadClient
    let simPid: Int32
    let server: HTTPLoadClient

    /// POST /v1/receipts: "200", the API's error code, or the transport's error.
    func post(_ body: ByteBuffer) async -> String {
        outcome(of: await attempt { try await server.send(.POST, "/v1/receipts", json: body) })
    }

    /// How long the simulator's verifyReceipt takes, drawn from low...high ms, in both environments.
    func setLatency(_ low: Int, _ high: Int) async throws {
        for environment in ["production", "sandbox"] {
            _ = try await simulator.send(
                .POST, "/admin/faults/\(environment)", json: try Workload.json(["latency_min_ms": low, "latency_max_ms": high]))
        }
    }

    /// `phase`'s result, and the CPU ms per verification (`count` of them) of the server, the simulator and the generator over it.
    func costed(_ count: Int, _ phase: () async throws -> LoadSummary) async rethrows -> (LoadSummary, (Double, Double, Double)) {
        let pids = contender.processes()
        let before = (pids.map(cpuSeconds), cpuSeconds(simPid), cpuSeconds(getpid()))
        let summary = try await phase()
        let after = (pids.map(cpuSeconds), cpuSeconds(simPid), cpuSeconds(getpid()))
        let perVerification = { (seconds: Double) in 1_000 * seconds / Double(count) }
        return (summary, (
            perVerification(zip(after.0, before.0).map { $0 - $1 }.reduce(0, +)),
            perVerification(after.1 - before.1), perVerification(after.2 - before.2)))
    }
}

enum PeerComparison {
    /// Who runs, in each round: `storekeeper`, the floor, or a peer's directory name.
    static let order = ["asyncio_server", "storekeeper", floor, "flask_inapppy"]
    /// Storekeeper's libraries in one process with nothing but the peers' work (Benchmarks/FloorServer).
    static let floor = "swift_floor"
    /// (b)'s Apple: 3 s ± 1 s.
    static let openLatencyMs = (low: 2_000, high: 4_000)

    static func run(_ options: Options, peersDirectory: String) async throws {
        let current = Mutex<(Contender, Process)?>(nil)
        let interruptions = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler {
                current.withLock {
                    $0?.0.stop()
                    $0?.1.terminate()
                }
                exit(130)
            }
            source.resume()
            return source
        }
        defer { interruptions.forEach { $0.cancel() } }
        var runs: [PeerRun] = []
        for round in 1...options.rounds {
            for name in options.contenders {
                func session<T>(_ body: (PeerSession) async throws -> T) async throws -> T {
                    try await withSession(name, options, peersDirectory: peersDirectory, current: current, body)
                }
                var result = try await session { try await measure($0, round: round, options) }
                // On a server of its own: (b) would otherwise start with the 10,000 connections and
                // requests it left (bench/README, 2026-11-28 14:55), and this would start with the
                // memory (b)'s overload left resident.
                if inFlightCount(name, options) > 0 {
                    (result.inFlight, result.inFlightRSSKiB) = try await session {
                        try await measureInFlight($0, round: round, options)
                    }
                }
                print(describe(result))
                fflush(nil)
                runs.append(result)
            }
        }
        print()
        print(summary(runs))
    }

    /// Runs `body` against a simulator and server `name` started for it, and stops both after.
    static func withSession<T>(
        _ name: String, _ options: Options, peersDirectory: String, current: borrowing Mutex<(Contender, Process)?>,
        _ body: (PeerSession) async throws -> T
    ) async throws -> T {
        // A simulator of its own: its sandbox subscriptions renew every 5 minutes, and once the
        // first come due, every verifyReceipt walks them all; a long session would tax the last.
        let simPorts = freePorts(2)
        let link = try AppleLink(http1Port: simPorts[0], tlsPort: options.appleTLS ? simPorts[1] : nil)
        let simProcess = try BenchmarkSupport.start(
            "storekeeper-sim",
            link.simulatorEnvironment.merging([
                "STOREKEEPER_APPLE_SHARED_SECRET": BenchStack.secret, "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
            ]) { $1 },
            binDir: options.binDir)
        defer {
            simProcess.terminate()
            simProcess.waitUntilExit()
        }
        let contender = try await start(name, options, peersDirectory: peersDirectory, apple: link)
        current.withLock { $0 = (contender, simProcess) }
        let session = PeerSession(
            contender: contender, simulator: HTTPLoadClient(host: "127.0.0.1", port: simPorts[0]),
            simPid: simProcess.processIdentifier, server: HTTPLoadClient(host: "127.0.0.1", port: contender.port))
        let result: Result<T, any Error>
        do {
            result = .success(try await body(session))
        } catch {
            result = .failure(error)
        }
        contender.stop()
        await session.simulator.shutdown()
        await session.server.shutdown()
        current.withLock { $0 = nil }
        return try result.get()
    }

    /// The floor holds both ends of every verification in one process (the client's connection and
    /// Apple's): 10,000 in flight needs over 20,000 descriptors, more than many boxes' hard limit
    /// (this one's), and libdispatch crashes the process when it runs out. Its memory is not the question.
    /// The Flask peer holds 40.
    static func inFlightCount(_ name: String, _ options: Options) -> Int {
        name == "flask_inapppy" || name == floor ? 0 : options.inFlight
    }

    /// The Python peers call Apple over plain HTTP/1.1 whatever `apple` offers (aiohttp's client has no HTTP/2).
    static func start(_ name: String, _ options: Options, peersDirectory: String, apple: AppleLink) async throws -> Contender {
        if name == "storekeeper" {
            let stack = try await BenchStack.start(
                binDir: options.binDir, verifiers: options.verifiers, simulatorPort: apple.http1Port,
                appleTLS: apple.tls != nil, simulatorTLSPort: apple.tls?.port, transport: options.transport)
            return Contender(
                name: name, port: stack.gatewayPort, processes: { stack.members.map(\.process.processIdentifier) },
                stop: { stack.stop() })
        }
        let executable =
            name == floor
            ? URL(fileURLWithPath: options.binDir).appendingPathComponent("storekeeper-bench-floor")
            : URL(fileURLWithPath: peersDirectory).appendingPathComponent(name).appendingPathComponent("run")
        let peer = try await PeerServer.start(
            executable, apple: name == floor ? apple : apple.plain)
        let root = peer.process.processIdentifier
        return Contender(name: name, port: peer.port, processes: { processTree(root) }, stop: { peer.stop() })
    }

    /// (a), (c) and (b), in that order.
    static func measure(_ session: PeerSession, round: Int, _ options: Options) async throws -> PeerRun {
        let name = session.contender.name
        let flask = name == "flask_inapppy"
        let closedCount = flask ? options.flaskRequests : options.requests
        let openRates = flask ? [options.flaskRate] : options.peerRate
        let latencyRates = flask ? [] : options.latencyRates
        let latencyCounts = latencyRates.map { Int($0 * options.seconds) }
        let minted = try await Workload.mint(closedCount, prefix: "r\(round)-\(name)", simulator: session.simulator)
        // Every tenth receipt Workload.mint makes is a sandbox subscription (two Apple calls): (c) takes the others.
        let latencyReceipts = try await Workload.mint(
            latencyCounts.reduce(0, +) * 10 / 9 + 10, prefix: "r\(round)-\(name)-c", simulator: session.simulator
        ).enumerated().filter { $0.offset % 10 != 9 }.map(\.element)

        try await session.setLatency(0, 0)
        let closedBodies = try Workload.receiptBodies(minted)
        let (closed, closedCPU) = try await session.costed(closedCount) {
            try await ClosedLoop.run(count: closedCount, concurrency: options.concurrency) { await session.post(closedBodies[$0]) }
        }

        // (c) before the open loops, while nothing is queued anywhere.
        var latency: [AddedLatency] = []
        var nextReceipt = 0
        for (rate, count) in zip(latencyRates, latencyCounts) {
            let receipts = latencyReceipts[nextReceipt..<nextReceipt + count]
            nextReceipt += count
            try await session.setLatency(3_000, 3_000)
            // The simulator's own share first: its 3 s timers are not exact, and what they add is not the server's.
            let direct = try receipts.map { try Workload.json(["receipt-data": $0, "password": BenchStack.secret]) }
            var alone = await OpenLoop.run(count: count, rate: rate) { index in
                outcome(of: await attempt { try await session.simulator.send(.POST, "/production/verifyReceipt", json: direct[index]) })
            }
            let bodies = try receipts.enumerated().map { try Workload.json(["user_id": "u-\($0.offset)", "receipt_data": $0.element]) }
            var served = await OpenLoop.run(count: count, rate: rate) { await session.post(bodies[$0]) }
            alone.latencies = alone.latencies.map { $0 - .seconds(3) }
            served.latencies = served.latencies.map { $0 - .seconds(3) }
            latency.append(AddedLatency(rate: rate, simulator: alone, server: served))
            if let directory = options.latencyOut {
                try writeLatencies(alone, served, rate: rate, to: "\(directory)/round\(round)-\(name)-\(Int(rate)).tsv")
            }
        }

        try await session.setLatency(openLatencyMs.low, openLatencyMs.high)
        var open: [OpenStep] = []
        var search = RateSearch(rising: openRates, refinements: flask ? 0 : options.halvings)
        while let rate = search.next() {
            // Run at once after a miss, a halving step could start behind, still working off the miss.
            let afterMiss = open.last.map { $0.outcome != .keptUp } ?? false
            let settled = afterMiss ? await waitUntilIdle { session.contender.processes() + [session.simPid, getpid()] } : nil
            let count = Int(rate * options.seconds)
            // Minted step by step: the search stops early, and most servers never reach the highest rate.
            let bodies = try Workload.receiptBodies(
                try await Workload.mint(count, prefix: "r\(round)-\(name)-b\(Int(rate))", simulator: session.simulator))
            let (summary, cpu) = await session.costed(count) {
                await OpenLoop.run(count: count, rate: rate) { await session.post(bodies[$0]) }
            }
            open.append(OpenStep(rate: rate, summary: summary, cpu: cpu, settled: settled))
            search.record(offered: rate, open[open.count - 1].outcome)
        }

        let peak = session.contender.processes().map(peakResidentKiB).reduce(0, +)
        return PeerRun(
            name: name, round: round, closed: closed, closedCPU: closedCPU, open: open, inFlight: nil,
            latency: latency, inFlightRSSKiB: 0, peakRSSKiB: peak)
    }

    /// --in-flight verifications sent over 6 s while Apple takes 6 s, so that at the end all are in flight at once:
    /// how they ended, and the most resident memory the server's processes held together meanwhile.
    static func measureInFlight(_ session: PeerSession, round: Int, _ options: Options) async throws -> (LoadSummary, Int) {
        let count = inFlightCount(session.contender.name, options)
        let bodies = try Workload.receiptBodies(
            try await Workload.mint(count, prefix: "r\(round)-\(session.contender.name)-m", simulator: session.simulator))
        try await session.setLatency(6_000, 6_000)
        let sampling = Task {
            var highest = 0
            while !Task.isCancelled {
                highest = max(highest, session.contender.processes().map(residentKiB).reduce(0, +))
                try? await Task.sleep(for: .milliseconds(100))
            }
            return highest
        }
        let inFlight = await OpenLoop.run(count: count, rate: Double(count) / 6) { await session.post(bodies[$0]) }
        sampling.cancel()
        return (inFlight, await sampling.value)
    }

    static func describe(_ run: PeerRun) -> String {
        func cpu(_ cost: (server: Double, sim: Double, generator: Double)) -> String {
            "CPU ms per verification: server \(fixed(cost.server, 3)), sim \(fixed(cost.sim, 3)), generator \(fixed(cost.generator, 3))"
        }
        var lines = [
            "round \(run.round) \(run.name):",
            "  (a) Apple at once, closed loop: \(fixed(run.closedRate, 0)) successful answers/s (\(run.closed.succeeded) of "
                + "\(run.closed.count)), p50 \(fixed(run.closed.percentile(0.5).milliseconds, 1)) ms, p99 "
                + "\(fixed(run.closed.percentile(0.99).milliseconds, 1)) ms, errors: \(run.closed.errors); \(cpu(run.closedCPU))",
        ]
        for step in run.open {
            let summary = step.summary
            let settled = step.settled.map {
                $0.idle ? " (after \(fixed($0.waited.seconds, 1)) s for the server to go idle)"
                    : " (the server still busy after \(fixed($0.waited.seconds, 1)) s)"
            } ?? ""
            lines.append(
                "  (b) Apple 3 s ± 1 s, open loop at \(fixed(step.rate, 0))/s\(settled): \(describe(step.outcome)); "
                    + "\(summary.succeeded) of \(summary.count) answered 200, p50 \(fixed(summary.percentile(0.5).milliseconds, 0)) ms, "
                    + "latency grew \(fixed(summary.backlog?.drift.milliseconds ?? 0, 0)) ms, errors: \(summary.errors); \(cpu(step.cpu))")
        }
        lines.append("  (b) sustained: \(run.sustained.text)/s")
        for rate in run.latency {
            lines.append(
                "  (c) Apple exactly 3 s, open loop at \(fixed(rate.rate, 0))/s, over 3 s: simulator alone p50 "
                    + "\(fixed(rate.simulator.percentile(0.5).milliseconds, 1)) / p99 \(fixed(rate.simulator.percentile(0.99).milliseconds, 1)) ms, "
                    + "server p50 \(fixed(rate.server.percentile(0.5).milliseconds, 1)) / p99 \(fixed(rate.server.percentile(0.99).milliseconds, 1)) ms: "
                    + "added \(rate.text), errors: \(rate.server.errors)")
        }
        if let inFlight = run.inFlight {
            lines.append("  in flight: \(inFlight.count) sent over 6 s, Apple at 6 s: \(inFlight.succeeded) answered 200, errors: "
                + "\(inFlight.errors); RSS of all its processes meanwhile at most \(run.inFlightRSSKiB / 1_024) MiB")
        }
        lines.append("  peak RSS over the run, all its processes (each one's peak, summed): \(run.peakRSSKiB / 1_024) MiB")
        return lines.joined(separator: "\n")
    }

    static func describe(_ outcome: RateStepOutcome) -> String {
        switch outcome {
        case .keptUp: "kept up"
        case .fellBehind(let served): "fell behind, served \(fixed(served, 0))/s"
        case .failed: "over 1 % failed, no rate"
        case .backlogged: "backlogged from the start (median over Apple's slowest 4 s), no rate"
        }
    }

    /// Storekeeper over each peer, round by round.
    static func summary(_ runs: [PeerRun]) -> String {
        var lines = ["round | server | (a) answers/s | (b) sustained/s | CPU ms/verification (a) / (b) | RSS MiB in flight / peak | (c) added p50 / p99 | Storekeeper ÷ it: (a) / (b)"]
        for run in runs {
            let storekeeper = runs.first { $0.round == run.round && $0.name == "storekeeper" }
            var ratios = "-"
            if let storekeeper, run.name != "storekeeper" {
                ratios = "\(fixed(storekeeper.closedRate / run.closedRate, 2)) / \(storekeeper.sustained.ratioText(over: run.sustained))"
            }
            lines.append(
                "\(run.round) | \(run.name) | \(fixed(run.closedRate, 0)) | \(run.sustained.text) | "
                    + "\(fixed(run.closedCPU.server, 3)) / \(fixed(run.openCPU.server, 3)) | \(run.inFlightRSSKiB / 1_024) / \(run.peakRSSKiB / 1_024) | "
                    + run.latency.map { "\(fixed($0.rate, 0))/s \($0.text)" }.joined(separator: ", ") + " | \(ratios)")
        }
        return lines.joined(separator: "\n")
    }
}

/// (c) request by request, in the order they were due: when (seconds from the
/// first), and the simulator's and the server's milliseconds over 3 s. Where
/// in a run the slow answers fall (its start, a periodic stall) is what a
/// percentile cannot show.
func writeLatencies(_ alone: LoadSummary, _ served: LoadSummary, rate: Double, to path: String) throws {
    var lines = ["due_s\tsimulator_ms\tserver_ms"]
    for (index, (simulator, server)) in zip(alone.latencies, served.latencies).enumerated() {
        lines.append("\(fixed(Double(index) / rate, 4))\t\(fixed(simulator.milliseconds, 3))\t\(fixed(server.milliseconds, 3))")
    }
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
}
