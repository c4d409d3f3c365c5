// (b) of issue 20 as a search: one open loop per offered rate, lowest first,
// until the server no longer keeps up. One fixed rate told only "kept up" or
// the rate served below it; a server whose connections time out there (the
// asyncio peer's, at 2,000/s) gave no rate at all, so no ratio.

/// How one server did at one offered rate.
public enum RateStepOutcome: Sendable, Equatable {
    case keptUp
    /// Fell behind, serving about this rate (`Backlog.served`).
    case fellBehind(served: Double)
    /// Over 1 % failed (connections not accepted in time): the latencies left are not a queue's.
    case failed
    /// Its median answer came later than Apple's slowest: a backlog from the
    /// start (connections queued while thousands opened at once), so how
    /// latency grew from the first fifth says little of the rate served.
    case backlogged
    /// Not one request answered: the server is gone (the floor, out of
    /// descriptors, after a failed step). It says nothing of this rate.
    case unanswered

    /// - Parameter slowest: Apple's slowest answer in the run; a server that keeps up answers its median sooner.
    public init(_ summary: LoadSummary, offered rate: Double, slowest: Duration) {
        if summary.count > 0, summary.succeeded == 0 {
            self = .unanswered
        } else if summary.succeeded * 100 < summary.count * 99 {
            self = .failed
        } else if summary.percentile(0.5) > slowest {
            // Before the growth: with a backlog already in the first fifth, the growth understates the shortfall.
            self = .backlogged
        } else if let backlog = summary.backlog, !backlog.keptUp {
            self = .fellBehind(served: backlog.served(offered: rate))
        } else {
            self = .keptUp
        }
    }
}

/// Where a server's sustained rate lies, from its steps: at least the highest
/// rate it kept up with, at most the first it failed or backlogged at (or,
/// with no such rate, the first where it answered nothing).
public struct SustainedRate: Sendable, Equatable {
    /// At least this; 0 when it kept up with no rate offered.
    public let low: Double
    /// At most this; nil when it kept up with every rate offered.
    public let high: Double?

    public init(low: Double, high: Double?) {
        self.low = low
        self.high = high
    }

    /// From steps in the order run (`RateSearch`): rising rates, then halvings of
    /// the bracket the first miss left. A step that contradicts the ones before it
    /// (kept up at or above a rate missed, missed at or below one kept up with)
    /// is not counted; the search never runs one.
    public init(steps: [(offered: Double, outcome: RateStepOutcome)]) {
        var low = 0.0
        var high: Double?
        for step in steps {
            let inside = step.offered > low && step.offered < (high ?? .infinity)
            guard inside else { continue }
            switch step.outcome {
            case .keptUp:
                low = step.offered
            case .fellBehind(let served):
                let rate = max(low, served)
                self.init(low: rate, high: rate)
                return
            case .failed, .backlogged:
                high = step.offered
            case .unanswered:
                // A server already gone cannot narrow a bracket it left with a miss of its own.
                if high == nil { high = step.offered }
            }
        }
        self.init(low: low, high: high)
    }

    public var text: String {
        guard let high else { return "≥ \(fixed(low, 0)) (kept up with every rate)" }
        return low == high ? fixed(low, 0) : "\(fixed(low, 0))-\(fixed(high, 0))"
    }

    /// This rate over `other`'s, as far as the two bounds say: "1.62",
    /// "1.50-1.83", "≥ 1.40", "≤ 2.10", or "?".
    public func ratioText(over other: SustainedRate) -> String {
        let least = other.high.flatMap { $0 > 0 ? low / $0 : nil }
        let most = high.flatMap { high in other.low > 0 ? high / other.low : nil }
        switch (least, most) {
        case let (least?, most?): return least == most ? fixed(least, 2) : "\(fixed(least, 2))-\(fixed(most, 2))"
        case let (least?, nil): return "≥ \(fixed(least, 2))"
        case let (nil, most?): return "≤ \(fixed(most, 2))"
        case (nil, nil): return "?"
        }
    }
}
