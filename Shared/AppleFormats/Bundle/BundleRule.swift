/// Whether a purchase belongs to one of this deployment's apps
/// (`STOREKEEPER_BUNDLE_IDS`). One rule for every door a purchase comes in by:
/// the verifier's receipts and signed data, and the gateway's version 1
/// notifications. Each caller turns the verdict into its own error.
public struct BundleRule: Sendable {
    public enum Verdict: Equatable, Sendable {
        case accepted
        /// The purchase names no bundle (or an empty one).
        case unnamed
        /// No bundle is configured, and this kind of data is refused without one.
        case unconfigured
        /// The purchase is another app's.
        case otherApp
    }

    /// What an empty list means. The gateway and the verifiers refuse to start
    /// without one (`AppleSettings.requireBundleIDs`); an empty list is left only
    /// where a test or a tool builds a reader directly.
    public enum WhenUnconfigured: Sendable {
        /// Receipts and version 1 notifications: everything passes, as before
        /// the list was required (Apple checks a receipt's subscriptions
        /// against the shared secret; a version 1 notification carries it).
        case acceptAny
        /// Signed data (StoreKit 2, notifications version 2): nothing but its
        /// bundleId ties a JWS to this app, so without a list none passes.
        case refuse
    }

    public let allowed: Set<String>

    public init(allowed: some Sequence<String>) {
        self.allowed = Set(allowed)
    }

    public func verdict(for bundleID: String?, whenUnconfigured: WhenUnconfigured) -> Verdict {
        if allowed.isEmpty, whenUnconfigured == .acceptAny { return .accepted }
        guard let bundleID, !bundleID.isEmpty else { return .unnamed }
        guard !allowed.isEmpty else { return .unconfigured }
        return allowed.contains(bundleID) ? .accepted : .otherApp
    }
}
