// What --peers prints, and the (c) files it writes.
import BenchmarkSupport
import Foundation

extension PeerComparison {
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
        case .unanswered: "not one request answered (the server is gone), no rate; the search ends"
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
