import Crypto
import Foundation
import SwiftASN1
import X509

/// Signs payloads as the App Store does: compact JWS, ES256, with the whole
/// chain (leaf, intermediate, root) in `x5c`. The simulator signs with
/// `SimulatorSigningChain`; tests also sign with chains nobody trusts.
public struct SignedDataSigner: Sendable {
    private let key: P256.Signing.PrivateKey
    private let header: [UInt8]

    /// `chain` is leaf first; the leaf's public key must be `key`'s.
    public init(key: P256.Signing.PrivateKey, chain: [Certificate]) throws {
        var x5c: [String] = []
        for certificate in chain {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            x5c.append(Data(serializer.serializedBytes).base64EncodedString())
        }
        self.key = key
        self.header = Array(try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": x5c]))
    }

    /// The simulator's signer.
    public static func simulator() throws -> SignedDataSigner {
        try SignedDataSigner(
            key: P256.Signing.PrivateKey(pemRepresentation: SimulatorSigningChain.leafPrivateKeyPEM),
            chain: [
                try Certificate(pemEncoded: SimulatorSigningChain.leafCertificatePEM),
                try Certificate(pemEncoded: SimulatorSigningChain.intermediateCertificatePEM),
                try Certificate(pemEncoded: SimulatorSigningChain.rootCertificatePEM),
            ])
    }

    /// `payload` (a JSON object's bytes) as a compact JWS.
    public func sign(_ payload: some Collection<UInt8>) throws -> String {
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
