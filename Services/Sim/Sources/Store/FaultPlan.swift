import Foundation

/// Trouble the simulator injects into one environment's verifyReceipt, to
/// rehearse Apple's bad days: slow answers, 21005 and 21199, HTTP 503,
/// connections that hang, garbage or truncated JSON, a 50 MiB answer, and
/// an answer for another app's bundle.
public struct FaultPlan: SimFaultPlan, Equatable {
    public enum Fault: CaseIterable, Sendable {
        case hang, http503, status21005, status21199, garbage, truncated, huge, wrongBundle

        /// The fraction's key in the admin API's JSON.
        var key: String {
            switch self {
            case .hang: "rate_hang"
            case .http503: "rate_503"
            case .status21005: "rate_21005"
            case .status21199: "rate_21199"
            case .garbage: "rate_garbage"
            case .truncated: "rate_truncated"
            case .huge: "rate_huge"
            case .wrongBundle: "rate_wrong_bundle"
            }
        }
    }

    /// Added latency, uniform between the two bounds.
    public var latencyMinMs: Int = 0
    public var latencyMaxMs: Int = 0
    /// The fraction of calls (0...1) each fault hits; absent is none.
    public var rates: [Fault: Double] = [:]

    public init() {}

    /// Every field is optional in the admin API's JSON: what is left out is no fault.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        latencyMinMs = try container.decodeIfPresent(Int.self, forKey: Key("latency_min_ms")) ?? 0
        latencyMaxMs = try container.decodeIfPresent(Int.self, forKey: Key("latency_max_ms")) ?? latencyMinMs
        for fault in Fault.allCases {
            if let rate = try container.decodeIfPresent(Double.self, forKey: Key(fault.key)) { rates[fault] = rate }
        }
    }

    struct Key: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// Checks the plan makes sense; the message names the field.
    public func validated() throws(FaultPlanError) -> FaultPlan {
        for fault in Fault.allCases where !(0...1).contains(rates[fault] ?? 0) {
            throw FaultPlanError(message: "\(fault.key) must be between 0 and 1")
        }
        guard rates.values.reduce(0, +) <= 1 else { throw FaultPlanError(message: "rates add up to more than 1") }
        guard latencyMinMs >= 0, latencyMaxMs >= latencyMinMs, latencyMaxMs <= 600_000 else {
            throw FaultPlanError(message: "latency bounds must satisfy 0 <= latency_min_ms <= latency_max_ms <= 600000")
        }
        return self
    }

    /// Which fault hits a call (nil: none), from a uniform random `unit` in [0, 1).
    public func fault(unit: Double) -> Fault? {
        var bound = 0.0
        for fault in Fault.allCases {
            bound += rates[fault] ?? 0
            if unit < bound { return fault }
        }
        return nil
    }

    public func latency(unit: Double) -> Duration {
        .milliseconds(latencyMinMs + Int(Double(latencyMaxMs - latencyMinMs) * unit))
    }
}

public struct FaultPlanError: Error, Equatable {
    public let message: String
}

/// A plan of faults the admin API takes (verifyReceipt's, the Server API's):
/// decoded from JSON, then checked.
public protocol SimFaultPlan: Decodable, Sendable {
    /// The plan, or the error naming the field at fault.
    func validated() throws(FaultPlanError) -> Self
}
