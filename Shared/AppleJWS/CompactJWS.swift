import Foundation

/// A JWS in compact serialization (`header.payload.signature`), split and
/// decoded but not yet trusted: `SignedDataVerifier` decides that.
struct CompactJWS {
    /// What the signature covers: the first two parts as sent.
    let signingInput: [UInt8]
    /// The first part as sent. Every JWS of one signing key has the same one,
    /// so it keys the chains already validated; decoded only on a miss.
    let encodedHeader: Substring
    let payload: [UInt8]
    let signature: [UInt8]

    /// Larger than any JWS Apple sends (a notification with both nested JWS is ~10 KiB).
    static let maxLength = 256 * 1024

    init(_ text: String) throws(SignedDataError) {
        guard text.utf8.count <= Self.maxLength else { throw .malformed }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2])
        else { throw .malformed }
        // The payload is left to whoever decodes the claims, once, after the signature holds.
        self.signingInput = Array(text.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        self.encodedHeader = parts[0]
        self.payload = payload
        self.signature = signature
    }

    struct Header {
        let algorithm: String
        /// `x5c`: DER certificates, leaf first. Empty when the header has none.
        let certificateChain: [[UInt8]]
    }

    func header() throws(SignedDataError) -> Header {
        guard let headerBytes = Base64URL.decode(encodedHeader),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any]
        else { throw .malformed }
        guard let algorithm = header["alg"] as? String else { throw .malformed }
        var chain: [[UInt8]] = []
        if let x5c = header["x5c"] {
            // x5c is standard base64 (RFC 7515 §4.1.6), not base64url.
            guard let entries = x5c as? [String] else { throw .certificateInvalid }
            for entry in entries {
                guard let der = Data(base64Encoded: entry) else { throw .certificateInvalid }
                chain.append(Array(der))
            }
        }
        return Header(algorithm: algorithm, certificateChain: chain)
    }
}
