// What a load run measured: answers by status and error code, and latencies.
import Foundation

public struct LoadSummary: Sendable {
    public var latencies: [Duration] = []
    public var byOutcome: [String: Int] = [:]
    public var wall: Duration = .zero
    /// For an open loop: whether it kept up with its rate.
    public var backlog: Backlog?

    public init() {}

    /// Adds one answer: 200, or the API's error code (`503 apple_unavailable`), or a transport error.
    public mutating func add(latency: Duration, outcome: String) {
        latencies.append(latency)
        byOutcome[outcome, default: 0] += 1
    }

    public mutating func merge(_ other: LoadSummary) {
        latencies += other.latencies
        for (outcome, count) in other.byOutcome { byOutcome[outcome, default: 0] += count }
    }

    public var count: Int { latencies.count }
    public var succeeded: Int { byOutcome["200", default: 0] }
    public var perSecond: Double { Double(count) / wall.seconds }

    /// The latency at `fraction` (0.5, 0.99) of the sorted latencies.
    public func percentile(_ fraction: Double) -> Duration { Self.percentile(fraction, of: latencies) }

    /// The value at `fraction` of `durations` once sorted; zero for none.
    public static func percentile(_ fraction: Double, of durations: some Collection<Duration>) -> Duration {
        let sorted = durations.sorted()
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))]
    }

    public var errors: String {
        let failures = byOutcome.filter { $0.key != "200" }.sorted { $0.key < $1.key }
        return failures.isEmpty ? "none" : failures.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }
}

/// How an open loop's latency grew from the first fifth of its requests (by
/// due time) to the last. A stack that keeps up answers both alike; one that
/// serves less than the offered rate queues more the longer the run goes.
public struct Backlog: Sendable {
    /// How much later, at the median, the last fifth was answered than the first.
    public var drift: Duration
    /// The time between the two fifths' due times.
    public var span: Duration

    public init(drift: Duration, span: Duration) {
        self.drift = drift
        self.span = span
    }

    /// The offered rate over the rate served, minus one: a stack serving μ of
    /// an offered λ answers each request (λ/μ − 1) s later per second of the run.
    public var shortfall: Double { max(0, drift.seconds / span.seconds) }
    /// Within 3 %, which a 10 s run's noise reaches; falling behind by more grows by seconds.
    public var keptUp: Bool { shortfall < 0.03 }
    /// The rate the stack served, given the rate offered.
    public func served(offered rate: Double) -> Double { rate / (1 + shortfall) }
}

extension Duration {
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    public var milliseconds: Double { seconds * 1_000 }
}

/// `3.2` → `"3.20"`.
public func fixed(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
