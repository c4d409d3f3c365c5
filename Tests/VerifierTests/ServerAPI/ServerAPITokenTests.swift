import Synchronization
import AppleFormats
import AppleJWS
import Crypto
import Foundation
import Testing

@testable import Verifier

/// The Server API's JWT: its shape and signature, and when it is reused or
/// renewed (the clock passed in, never waited for).
@Suite struct ServerAPITokenTests {
    let key = P256.Signing.PrivateKey()
    var credentials: ServerAPICredentials {
        ServerAPICredentials(
            issuerID: "57246542-96fe-1a63-e053-0824d011072a", keyID: "2X9R4HXF34", bundleID: "com.example.app",
            signingKey: ServerAPISigningKey(key: key))
    }

    @Test func theTokenIsApplesShapeAndVerifiesWithThePublicKey() throws {
        let token = try ServerAPITokens.sign(credentials, issuedAt: 1_700_000_000)
        let parts = token.split(separator: ".")
        #expect(parts.count == 3)
        let header = try JSONDecoder().decode(ServerAPIToken.Header.self, from: Data(try #require(Base64URL.decode(parts[0]))))
        #expect(header == ServerAPIToken.Header(keyID: "2X9R4HXF34"))
        #expect(header.alg == "ES256" && header.typ == "JWT")
        let claims = try JSONDecoder().decode(ServerAPIToken.Claims.self, from: Data(try #require(Base64URL.decode(parts[1]))))
        #expect(claims.iss == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims.aud == "appstoreconnect-v1")
        #expect(claims.bid == "com.example.app")
        #expect(claims.iat == 1_700_000_000)
        #expect(claims.exp - claims.iat == ServerAPITokenCache.lifetime)
        #expect(ServerAPITokenCache.lifetime <= ServerAPIToken.maximumLifetimeSeconds)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Array(token.utf8.prefix(parts[0].count + 1 + parts[1].count))))
    }

    @Test func theCacheHandsOutOneTokenUntilFiveMinutesAreLeft() {
        var cache = ServerAPITokenCache()
        #expect(cache.current(at: 1_000) == nil)
        cache.store("A", issuedAt: 1_000)
        #expect(cache.current(at: 1_000) == "A")
        #expect(cache.current(at: 1_000 + 24 * 60) == "A")
        #expect(cache.current(at: 1_000 + 25 * 60) == nil, "five minutes before exp: renewed")
        #expect(cache.current(at: 999) == nil, "a clock that went back before iat: renewed")
        cache.invalidate()
        #expect(cache.current(at: 1_001) == nil)
    }

    @Test func tokensAreRenewedAsTheInjectedClockMoves() throws {
        let clock = MovableClock(Date(timeIntervalSince1970: 1_700_000_000))
        let tokens = ServerAPITokens(credentials: credentials, clock: clock.now)
        let first = try tokens.token()
        clock.advance(by: 10 * 60)
        #expect(try tokens.token() == first)
        clock.advance(by: 16 * 60)
        let second = try tokens.token()
        #expect(second != first)
        #expect(try tokens.token() == second)
        tokens.invalidate()
        #expect(try tokens.token() != second, "a refused token is not sent again")
    }
}

/// A wall clock moved by hand.
final class MovableClock: Sendable {
    private let seconds: Mutex<Date>

    init(_ start: Date) { seconds = Mutex(start) }

    func now() -> Date { seconds.withLock { $0 } }

    func advance(by interval: TimeInterval) { seconds.withLock { $0 += interval } }
}
