// What --peers measured of one server in one round.
import BenchmarkSupport

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

/// What one server did in one round.
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
