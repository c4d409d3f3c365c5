import Foundation

/// Trouble the simulator injects into one environment's verifyReceipt, to
/// rehearse Apple's bad days: slow answers, 21005, HTTP 503 and connections
/// that hang.
public struct FaultPlan: Codable, Sendable, Equatable {
    /// Added latency, uniform between the two bounds.
    public var latencyMinMs: Int = 0
    public var latencyMaxMs: Int = 0
    /// Fractions of calls (0...1) answered with 21005, with HTTP 503, or never answered.
    public var rate21005: Double = 0
    public var rate503: Double = 0
    public var rateHang: Double = 0

    public init() {}

    /// Every field is optional in the admin API's JSON: what is left out is no fault.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        latencyMinMs = try container.decodeIfPresent(Int.self, forKey: .latencyMinMs) ?? 0
        latencyMaxMs = try container.decodeIfPresent(Int.self, forKey: .latencyMaxMs) ?? latencyMinMs
        rate21005 = try container.decodeIfPresent(Double.self, forKey: .rate21005) ?? 0
        rate503 = try container.decodeIfPresent(Double.self, forKey: .rate503) ?? 0
        rateHang = try container.decodeIfPresent(Double.self, forKey: .rateHang) ?? 0
    }

    enum CodingKeys: String, CodingKey {
        case latencyMinMs = "latency_min_ms", latencyMaxMs = "latency_max_ms"
        case rate21005 = "rate_21005", rate503 = "rate_503", rateHang = "rate_hang"
    }

    public enum Fault: Equatable, Sendable { case none, status21005, http503, hang }

    /// Checks the plan makes sense; the message names the field.
    public func validated() throws(FaultPlanError) -> FaultPlan {
        for (name, rate) in [("rate_21005", rate21005), ("rate_503", rate503), ("rate_hang", rateHang)]
        where !(0...1).contains(rate) {
            throw FaultPlanError(message: "\(name) must be between 0 and 1")
        }
        guard rate21005 + rate503 + rateHang <= 1 else { throw FaultPlanError(message: "rates add up to more than 1") }
        guard latencyMinMs >= 0, latencyMaxMs >= latencyMinMs, latencyMaxMs <= 600_000 else {
            throw FaultPlanError(message: "latency bounds must satisfy 0 <= latency_min_ms <= latency_max_ms <= 600000")
        }
        return self
    }

    /// Which fault hits a call, from a uniform random `unit` in [0, 1).
    public func fault(unit: Double) -> Fault {
        if unit < rateHang { return .hang }
        if unit < rateHang + rate503 { return .http503 }
        if unit < rateHang + rate503 + rate21005 { return .status21005 }
        return .none
    }

    public func latency(unit: Double) -> Duration {
        .milliseconds(latencyMinMs + Int(Double(latencyMaxMs - latencyMinMs) * unit))
    }
}

public struct FaultPlanError: Error, Equatable {
    public let message: String
}
