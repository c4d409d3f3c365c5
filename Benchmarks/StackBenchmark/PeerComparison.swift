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
import ProcessSpawn
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum PeerComparison {
    /// Who runs, in each round: `storekeeper`, the floor, or a peer's directory name.
    static let order = ["asyncio_server", "storekeeper", floor, "flask_inapppy"]
    /// Storekeeper's libraries in one process with nothing but the peers' work (Benchmarks/FloorServer).
    static let floor = "swift_floor"
    /// (b)'s Apple: 3 s ± 1 s.
    static let openLatencyMs = (low: 2_000, high: 4_000)

    static func run(_ options: Options, peersDirectory: String) async throws {
        let current = Mutex<(Contender, SpawnedProcess)?>(nil)
        let interruptions = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler {
                current.withLock {
                    $0?.0.stop()
                    $0?.1.signal(SIGTERM)
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
                // requests it left (bench/JOURNAL.md, 2026-11-28 14:55), and this would start with the
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
        _ name: String, _ options: Options, peersDirectory: String, current: borrowing Mutex<(Contender, SpawnedProcess)?>,
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
        defer { simProcess.terminateAndWait() }
        let contender = try await start(name, options, peersDirectory: peersDirectory, apple: link)
        current.withLock { $0 = (contender, simProcess) }
        let session = PeerSession(
            contender: contender, simulator: HTTPLoadClient(host: "127.0.0.1", port: simPorts[0]),
            simPid: simProcess.pid, server: HTTPLoadClient(host: "127.0.0.1", port: contender.port))
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
                name: name, port: stack.gatewayPort, processes: { stack.members.map(\.process.pid) },
                stop: { stack.stop() })
        }
        let executable =
            name == floor
            ? URL(fileURLWithPath: options.binDir).appendingPathComponent("storekeeper-bench-floor")
            : URL(fileURLWithPath: peersDirectory).appendingPathComponent(name).appendingPathComponent("run")
        let peer = try await PeerServer.start(
            executable, apple: name == floor ? apple : apple.plain)
        let root = peer.process.pid
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
}
