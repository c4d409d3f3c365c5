/// The JSON Web Token that authorizes every App Store Server API request
/// (`Authorization: Bearer ...`): ES256 with the App Store Connect key
/// (`.p8`), its header naming the key, its claims the issuer, the app and
/// the token's lifetime (seconds since the epoch; at most 60 minutes).
public enum ServerAPIToken {
    /// `aud`: the App Store Server API's audience.
    public static let audience = "appstoreconnect-v1"
    /// Apple refuses a token whose `exp` is further than this after its `iat` (seconds).
    public static let maximumLifetimeSeconds: Int64 = 3_600

    public struct Header: Codable, Sendable, Equatable {
        /// `ES256`.
        public var alg: String
        /// The key's id in App Store Connect.
        public var kid: String
        /// `JWT`.
        public var typ: String

        public init(keyID: String) {
            self.alg = "ES256"
            self.kid = keyID
            self.typ = "JWT"
        }
    }

    public struct Claims: Codable, Sendable, Equatable {
        /// The issuer id of the App Store Connect key.
        public var iss: String
        public var iat: Int64
        public var exp: Int64
        public var aud: String
        /// The app's bundle id.
        public var bid: String

        public init(issuerID: String, issuedAt: Int64, expiresAt: Int64, bundleID: String) {
            self.iss = issuerID
            self.iat = issuedAt
            self.exp = expiresAt
            self.aud = ServerAPIToken.audience
            self.bid = bundleID
        }
    }
}
