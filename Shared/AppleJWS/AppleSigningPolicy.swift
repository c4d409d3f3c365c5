import SwiftASN1
import X509

/// Apple's marker extensions, checked as Apple's App Store Server Libraries
/// check them: the leaf must carry the App Store receipt-signing marker
/// (1.2.840.113635.100.6.11.1) and the intermediate the Apple WWDR marker
/// (1.2.840.113635.100.6.2.1). A chain under a trusted root that lacks them
/// (any other certificate Apple ever issued) is refused.
struct AppleSigningPolicy: VerifierPolicy {
    static let receiptSigningMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let wwdrIntermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.receiptSigningMarker, Self.wwdrIntermediateMarker]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        // leaf, intermediate, root: exactly Apple's shape.
        guard chain.count == 3 else { return .failsToMeetPolicy(reason: "the chain is not leaf, intermediate, root") }
        guard chain[0].extensions[oid: Self.receiptSigningMarker] != nil else {
            return .failsToMeetPolicy(reason: "the leaf lacks Apple's receipt-signing marker")
        }
        guard chain[1].extensions[oid: Self.wwdrIntermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's WWDR marker")
        }
        return .meetsPolicy
    }
}
