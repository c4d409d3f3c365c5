// What a load run measured: answers by status and error code, and latencies.
import Foundation

public struct LoadSummary: Sendable {
    public var latencies: [Duration] = []
    public var byOutcome: [String: Int] = [:]
    public var wall: Duration = .zero

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
    public func percentile(_ fraction: Double) -> Duration {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))]
    }

    public var errors: String {
        let failures = byOutcome.filter { $0.key != "200" }.sorted { $0.key < $1.key }
        return failures.isEmpty ? "none" : failures.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }
}

extension Duration {
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    public var milliseconds: Double { seconds * 1_000 }
}

/// `3.2` → `"3.20"`.
public func fixed(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
