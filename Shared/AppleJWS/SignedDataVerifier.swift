import Crypto
import Foundation
import SwiftASN1
// The fixed validation time (X509's documented SPI) lets tests check payloads of the past.
@_spi(FixedExpiryValidationTime) import X509

/// Verifies a JWS the App Store signed, locally (no call to Apple), as
/// Apple's App Store Server Libraries do: ES256 only; `x5c` holds the leaf,
/// the intermediate and a root; the leaf and the intermediate chain up to one
/// of the trusted roots (never to `x5c`'s own root, which anyone can put
/// there), every certificate is valid at the validation time, both carry
/// Apple's marker extensions; then the signature verifies with the leaf's key.
///
/// The validation time is now: a JWS whose chain has expired is refused even
/// if it claims an earlier `signedDate` (a claim the signer controls).
public struct SignedDataVerifier: Sendable {
    private let roots: [Certificate]
    private let validationTime: @Sendable () -> Date
    /// Chains already validated: Apple signs with a handful of leaves, and a
    /// chain validation costs far more than the signature check.
    private let validatedChains = ValidatedChains()

    /// - Parameters:
    ///   - trustedRoots: Apple Root CA - G3 in production; tests add their own only through configuration.
    ///   - validationTime: when certificates must be valid; now, except in tests of old payloads.
    public init(trustedRoots: [Certificate], validationTime: @escaping @Sendable () -> Date = { Date() }) {
        self.roots = trustedRoots
        self.validationTime = validationTime
    }

    /// Apple Root CA - G3 plus `extraRootsPEM` (each a PEM text of one or more certificates).
    public static func appleRoots(extraRootsPEM: [String] = []) throws -> [Certificate] {
        var roots = [try Certificate(pemEncoded: AppleRootCertificates.appleRootCAG3PEM)]
        for text in extraRootsPEM {
            roots += try PEMDocument.parseMultiple(pemString: text).map { try Certificate(pemDocument: $0) }
        }
        return roots
    }

    /// The payload's JSON bytes once everything above holds.
    public func verify(_ jws: String) async throws(SignedDataError) -> [UInt8] {
        let parsed = try CompactJWS(jws)
        let now = validationTime()
        let key = try await validatedKey(parsed, at: now)
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parsed.signature),
            key.isValidSignature(signature, for: parsed.signingInput)
        else { throw .signatureInvalid }
        return parsed.payload
    }

    /// The leaf's key, once its chain holds at `now`: from the cache, or checked and cached.
    private func validatedKey(_ parsed: CompactJWS, at now: Date) async throws(SignedDataError) -> P256.Signing.PublicKey {
        if let key = validatedChains.key(for: parsed.encodedHeader, at: now) { return key }
        let header = try parsed.header()
        guard header.algorithm == "ES256" else { throw .unsupportedAlgorithm }
        guard header.certificateChain.count == 3 else { throw .certificateChainMissing }
        let leaf: Certificate
        let intermediate: Certificate
        do {
            leaf = try Certificate(derEncoded: header.certificateChain[0])
            intermediate = try Certificate(derEncoded: header.certificateChain[1])
        } catch {
            throw .certificateInvalid
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: now)
            AppleSigningPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate(let chain) = result else { throw .chainUntrusted }
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else { throw .signatureInvalid }
        validatedChains.insert(
            parsed.encodedHeader, key: key, from: chain.map(\.notValidBefore).max() ?? now,
            until: chain.map(\.notValidAfter).min() ?? now)
        return key
    }
}
