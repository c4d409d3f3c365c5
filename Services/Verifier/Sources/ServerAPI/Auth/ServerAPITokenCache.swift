/// When a Server API token can be sent again and when a new one must be
/// signed, as a value with the time passed in (seconds since the epoch), so
/// renewal is tested without waiting.
///
/// A token lives `lifetime` (half of Apple's 60-minute bound) and is renewed
/// once less than `renewalMargin` is left, so no request leaves with a token
/// that lapses on its way or while Apple answers slowly. A clock that went
/// back behind the token's `iat` also renews it: Apple would refuse a token
/// issued in its future.
struct ServerAPITokenCache: Sendable, Equatable {
    static let lifetime: Int64 = 1_800
    static let renewalMargin: Int64 = 300

    private(set) var token: String?
    private(set) var issuedAt: Int64 = 0

    var expiresAt: Int64 { issuedAt + Self.lifetime }

    /// The token to send at `now`; nil when a new one must be signed first.
    func current(at now: Int64) -> String? {
        guard let token, now >= issuedAt, now + Self.renewalMargin < expiresAt else { return nil }
        return token
    }

    mutating func store(_ token: String, issuedAt: Int64) {
        self.token = token
        self.issuedAt = issuedAt
    }

    /// Forgets the token (Apple refused it): the next call signs a new one.
    mutating func invalidate() {
        token = nil
    }
}
