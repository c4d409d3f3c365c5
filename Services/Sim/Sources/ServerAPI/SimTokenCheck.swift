import AppleFormats
import AppleJWS
import Crypto
import Foundation

/// Checks a Server API bearer token as Apple does: ES256 over header and
/// claims with the key the header's `kid` names, `typ` JWT, the key's issuer
/// as `iss`, `aud` appstoreconnect-v1, the simulator's bundle as `bid`, and
/// a live token (`iat` not ahead of the clock, `exp` not past, and at most
/// 60 minutes after `iat`).
///
/// The clock is the caller's world, not the simulator's store clock: moving
/// the store forward a month must not expire every token. Injected, so a
/// test shares one with the client it drives.
struct SimTokenCheck: Sendable {
    /// Why a token was refused (logged; Apple's answer is a bare 401 either way).
    enum Refusal: String, Sendable {
        case missing, malformed, unknownKey, signature, issuer, audience, bundle, issuedInFuture, expired, lifetimeTooLong
    }

    let publicKey: P256.Signing.PublicKey
    let keyID: String
    let issuerID: String
    let bundleID: String
    let clock: @Sendable () -> Date

    /// A token issued up to this far ahead of this clock (seconds) is still taken: clocks drift.
    static let allowedSkew: Int64 = 60

    /// The simulator's own key (`SimulatorServerAPIKey`), for `bundleID`.
    static func simulator(bundleID: String, clock: @escaping @Sendable () -> Date = { Date() }) -> SimTokenCheck {
        // The key is a constant of this build: failing to load it is a broken build.
        let key = try! P256.Signing.PrivateKey(pemRepresentation: SimulatorServerAPIKey.privateKeyPEM)
        return SimTokenCheck(
            publicKey: key.publicKey, keyID: SimulatorServerAPIKey.keyID, issuerID: SimulatorServerAPIKey.issuerID,
            bundleID: bundleID, clock: clock)
    }

    /// nil when the `Authorization` header carries a token Apple would take.
    func refusal(of authorization: String?) -> Refusal? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return .missing }
        let token = authorization.dropFirst("Bearer ".count)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode(ServerAPIToken.Header.self, from: Data(headerBytes)),
            let claims = try? JSONDecoder().decode(ServerAPIToken.Claims.self, from: Data(claimsBytes))
        else { return .malformed }
        guard header.alg == "ES256", header.typ == "JWT", header.kid == keyID else { return .unknownKey }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: signingInput)
        else { return .signature }
        let now = Int64(clock().timeIntervalSince1970.rounded(.down))
        if claims.iss != issuerID { return .issuer }
        if claims.aud != ServerAPIToken.audience { return .audience }
        if claims.bid != bundleID { return .bundle }
        if claims.iat > now + Self.allowedSkew { return .issuedInFuture }
        if claims.exp <= now { return .expired }
        if claims.exp - claims.iat > ServerAPIToken.maximumLifetimeSeconds { return .lifetimeTooLong }
        return nil
    }
}
