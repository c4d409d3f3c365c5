/// Whether the verifiers can call the App Store Server API, as their last
/// answer said. The verifiers hold the API key (the ledger never reads it),
/// so the ledger learns it from them: any answer to a Server API request but
/// `server_api_unconfigured` means available; that one means not, until it is
/// worth asking again (a verifier restarted with a key). Pure: the caller
/// passes the time.
struct ServerAPIAvailability: Equatable, Sendable {
    enum Known: Equatable, Sendable {
        /// Nobody asked yet.
        case unknown
        case available
        /// A verifier said it has no key, at `sinceMs`.
        case unconfigured(sinceMs: Int64)
    }

    /// How long an "unconfigured" answer stands before the Server API is tried again.
    static let recheckAfterMs: Int64 = 10 * 60_000

    private(set) var known: Known = .unknown

    /// A verifier answered a Server API request (a failure from Apple counts: the key is there).
    mutating func answered() { known = .available }

    /// A verifier answered `server_api_unconfigured`.
    mutating func unconfigured(at nowMs: Int64) { known = .unconfigured(sinceMs: nowMs) }

    /// Whether to try the Server API now: unless a verifier said recently that it has no key.
    func shouldAsk(at nowMs: Int64) -> Bool {
        guard case .unconfigured(let since) = known else { return true }
        return nowMs - since >= Self.recheckAfterMs
    }
}
