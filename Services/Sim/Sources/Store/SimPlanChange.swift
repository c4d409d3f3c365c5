/// The plan changes a customer makes within a subscription group (Apple's
/// "upgrade, downgrade or crossgrade"): what the App Store does with each
/// depends on the kind and, for a crossgrade, on whether the period changes.
public enum SimPlanChange: String, Codable, Sendable, CaseIterable {
    case upgrade, downgrade, crossgrade

    /// Whether going from level `from` to level `to` (1 the highest) is this kind.
    func allows(from: Int, to: Int) -> Bool {
        switch self {
        case .upgrade: to < from
        case .downgrade: to > from
        case .crossgrade: to == from
        }
    }
}
