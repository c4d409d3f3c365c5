import AppleJWS
import Crypto
import Foundation
import SwiftASN1
import X509

/// A chain in Apple's shape, made at run time with keys nobody else has: to
/// sign forgeries (a chain under an untrusted root), chains without Apple's
/// markers, and expired ones.
struct TestChain {
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: P256.Signing.PrivateKey

    // Apple's marker extensions (the values AppleSigningPolicy looks for).
    static let receiptSigningMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let wwdrMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    init(markers: Bool = true, validFrom: Date = Date() - 86_400, validUntil: Date = Date() + 86_400 * 365) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Test Root") }
        let intermediateName = try DistinguishedName { CommonName("Test Intermediate") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: validFrom,
            notValidAfter: validUntil, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            }, issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: validFrom,
            notValidAfter: validUntil, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
                if markers { Certificate.Extension(oid: Self.wwdrMarker, critical: false, value: [0x05, 0x00]) }
            }, issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: validFrom,
            notValidAfter: validUntil, issuer: intermediateName, subject: try DistinguishedName { CommonName("Test Leaf") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                if markers { Certificate.Extension(oid: Self.receiptSigningMarker, critical: false, value: [0x05, 0x00]) }
            }, issuerPrivateKey: .init(intermediateKey))
    }

    func signer() throws -> SignedDataSigner { try SignedDataSigner(key: leafKey, chain: [leaf, intermediate, root]) }

    var rootPEM: String { get throws { try root.serializeAsPEM().pemString } }
}
