import AppleFormats
import AppleJWS
import Foundation
import Testing

@testable import Simulator
@testable import Verifier

/// The client's token, as the simulator checks it, across its lifetime: the
/// clock is moved, never waited for.
@Suite("Server API against the simulator: tokens")
struct TokenRenewalTests {
    @Test func oneTokenServesUntilItNearsItsExpiryThenANewOneIsSigned() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy(environment: .production)
            let client = try harness.client()
            _ = try await client.transactionInfo(bought.transactionID)
            harness.clock.advance(by: 20 * 60)
            _ = try await client.transactionInfo(bought.transactionID)
            harness.clock.advance(by: 6 * 60)  // 26 minutes: less than 5 of the token's 30 are left
            _ = try await client.transactionInfo(bought.transactionID)
            harness.clock.advance(by: 60 * 60)  // the simulator would refuse the old one now
            _ = try await client.transactionInfo(bought.transactionID)
            let tokens = harness.tokens
            #expect(tokens.count == 4)
            #expect(tokens[0] == tokens[1])
            #expect(tokens[1] != tokens[2])
            #expect(tokens[2] != tokens[3])
            let claims = try tokens.map(Self.claims)
            #expect(claims.allSatisfy { $0.exp - $0.iat <= ServerAPIToken.maximumLifetimeSeconds })
            #expect(claims[2].iat - claims[0].iat == 26 * 60)
        }
    }

    @Test func theSimulatorRefusesAnExpiredOrForeignToken() async throws {
        try await ServerAPIHarness.with { harness in
            let credentials = try ServerAPIHarness.credentials()
            let check = SimTokenCheck.simulator(bundleID: ServerAPIHarness.bundleID, clock: harness.clock.now)
            let now = Int64(harness.clock.now().timeIntervalSince1970)
            let fresh = try ServerAPITokens.sign(credentials, issuedAt: now)
            #expect(check.refusal(of: "Bearer " + fresh) == nil)
            #expect(check.refusal(of: "Bearer " + (try ServerAPITokens.sign(credentials, issuedAt: now - 3_600))) == .expired)
            #expect(check.refusal(of: "Bearer " + (try ServerAPITokens.sign(credentials, issuedAt: now + 600))) == .issuedInFuture)
            let otherApp = ServerAPICredentials(
                issuerID: credentials.issuerID, keyID: credentials.keyID, bundleID: "com.example.other",
                signingKey: credentials.signingKey)
            #expect(check.refusal(of: "Bearer " + (try ServerAPITokens.sign(otherApp, issuedAt: now))) == .bundle)
            let otherIssuer = ServerAPICredentials(
                issuerID: "someone-else", keyID: credentials.keyID, bundleID: credentials.bundleID,
                signingKey: credentials.signingKey)
            #expect(check.refusal(of: "Bearer " + (try ServerAPITokens.sign(otherIssuer, issuedAt: now))) == .issuer)
            #expect(check.refusal(of: nil) == .missing)
            #expect(check.refusal(of: "Bearer not.a-token") == .malformed)
        }
    }

    static func claims(_ authorization: String) throws -> ServerAPIToken.Claims {
        let token = try #require(authorization.split(separator: " ").last)
        let payload = try #require(Base64URL.decode(token.split(separator: ".")[1]))
        return try JSONDecoder().decode(ServerAPIToken.Claims.self, from: Data(payload))
    }
}
