/// Why a JWS was refused. Each has a stable code for logs and metrics; none
/// carries the JWS or any of its claims.
public enum SignedDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not three base64url parts, or a header that is not a JSON object.
    case malformed
    /// The header's `alg` is not ES256.
    case unsupportedAlgorithm
    /// The header has no `x5c`, or not the three certificates Apple sends (leaf, intermediate, root).
    case certificateChainMissing
    /// A certificate in `x5c` does not parse.
    case certificateInvalid
    /// The chain does not reach a trusted root at the validation time, or a
    /// certificate lacks Apple's marker extension, or one has expired.
    case chainUntrusted
    /// The ES256 signature does not verify with the leaf's key.
    case signatureInvalid

    public var code: String {
        switch self {
        case .malformed: "jws_malformed"
        case .unsupportedAlgorithm: "jws_unsupported_algorithm"
        case .certificateChainMissing: "jws_chain_missing"
        case .certificateInvalid: "jws_certificate_invalid"
        case .chainUntrusted: "jws_chain_untrusted"
        case .signatureInvalid: "jws_signature_invalid"
        }
    }

    public var description: String { code }
}
