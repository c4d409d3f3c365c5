/// What a DNS name resolves to now.
public enum Resolution: Equatable, Sendable {
    /// Every address of the name (IPv4 dotted, IPv6 without brackets), none
    /// when the name exists no more (no gateway runs under it).
    case addresses([String])
    /// The lookup failed for a reason that may pass (the DNS server did not
    /// answer): what the name resolved to before still holds.
    case failed(String)
}

/// Resolves host names for `PoolDiscovery`; tests inject their own answers.
public protocol AddressResolver: Sendable {
    /// Returns promptly when the calling task is cancelled (with `.failed`).
    func resolve(_ host: String) async -> Resolution
}
