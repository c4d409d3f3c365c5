import AppleFormats
import AppleJWS
import Foundation
import Synchronization

/// Signs the Server API's tokens and hands the same one out until it nears
/// its expiry (`ServerAPITokenCache`). Thread-safe; the clock is injected so
/// tests move it instead of sleeping.
final class ServerAPITokens: Sendable {
    private let credentials: ServerAPICredentials
    private let clock: @Sendable () -> Date
    private let cache = Mutex(ServerAPITokenCache())

    init(credentials: ServerAPICredentials, clock: @escaping @Sendable () -> Date) {
        self.credentials = credentials
        self.clock = clock
    }

    /// The token to send now. Signing happens under the lock: it takes
    /// microseconds, and callers that arrive during a renewal share the new token.
    func token() throws(ServerAPIError) -> String {
        let now = Int64(clock().timeIntervalSince1970.rounded(.down))
        return try cache.withLock { cache throws(ServerAPIError) in
            if let token = cache.current(at: now) { return token }
            let token: String
            do {
                token = try Self.sign(credentials, issuedAt: now)
            } catch {
                throw .unauthorized
            }
            cache.store(token, issuedAt: now)
            return token
        }
    }

    /// Apple refused the token: the next call signs another.
    func invalidate() {
        cache.withLock { $0.invalidate() }
    }

    /// A compact JWT: base64url header and claims, and the ES256 signature over both.
    static func sign(_ credentials: ServerAPICredentials, issuedAt: Int64) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = try encoder.encode(ServerAPIToken.Header(keyID: credentials.keyID))
        let claims = try encoder.encode(
            ServerAPIToken.Claims(
                issuerID: credentials.issuerID, issuedAt: issuedAt, expiresAt: issuedAt + ServerAPITokenCache.lifetime,
                bundleID: credentials.bundleID))
        let input = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        return input + "." + Base64URL.encode(try credentials.signingKey.sign(Array(input.utf8)))
    }
}
