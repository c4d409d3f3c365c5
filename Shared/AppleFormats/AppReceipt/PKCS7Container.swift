import SwiftASN1

/// The PKCS#7 (CMS, RFC 5652) envelope of an app receipt, opened as far as
/// the receipt's own bytes and no further:
///
///     ContentInfo ::= SEQUENCE { contentType OID (signedData), content [0] EXPLICIT SignedData }
///     SignedData ::= SEQUENCE { version INTEGER, digestAlgorithms SET,
///                               encapContentInfo SEQUENCE { eContentType OID (data),
///                                                           eContent [0] EXPLICIT OCTET STRING },
///                               certificates [0], crls [1], signerInfos SET }
///
/// Read as BER, not DER: Xcode's receipts use indefinite lengths and the App
/// Store's may split the octets into a constructed OCTET STRING. swift-asn1
/// bounds the nesting (50) and refuses trailing bytes.
///
/// The signature and certificates are not checked, as Apple's own
/// `ReceiptUtility` does not: the ids read here only choose what to ask the
/// App Store Server API, whose signed answers are what Storekeeper trusts.
enum PKCS7Container {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    private static let explicitZero = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    /// The encapsulated content: the receipt's attribute set, still encoded.
    static func content(of bytes: [UInt8]) throws(AppReceiptError) -> [UInt8] {
        let signedData: [ASN1Node]
        do {
            let contentInfo = try children(of: try BER.parse(bytes), .sequence)
            guard contentInfo.count == 2, try ASN1ObjectIdentifier(berEncoded: contentInfo[0]) == signedDataOID else {
                throw AppReceiptError.notSignedData
            }
            signedData = try children(of: try explicit(contentInfo[1]), .sequence)
            // version, digestAlgorithms, encapContentInfo, [certificates], [crls], signerInfos.
            guard signedData.count >= 4, signedData[0].identifier == .integer, signedData[1].identifier == .set,
                signedData.last?.identifier == .set
            else { throw AppReceiptError.notSignedData }
        } catch {
            throw .notSignedData
        }
        do {
            let encapsulated = try children(of: signedData[2], .sequence)
            guard encapsulated.count == 2, try ASN1ObjectIdentifier(berEncoded: encapsulated[0]) == dataOID else {
                throw AppReceiptError.noContent
            }
            return try octets(of: try explicit(encapsulated[1]))
        } catch {
            throw .noContent
        }
    }

    /// The value of an OCTET STRING, primitive or (BER) constructed of chunks.
    static func octets(of node: ASN1Node) throws(AppReceiptError) -> [UInt8] {
        guard node.identifier == .octetString else { throw .malformedPayload }
        return try joined(node)
    }

    /// The content octets of a primitive node, or of a constructed one's chunks joined (BER strings).
    static func joined(_ node: ASN1Node) throws(AppReceiptError) -> [UInt8] {
        switch node.content {
        case .primitive(let bytes):
            return Array(bytes)
        case .constructed(let chunks):
            var bytes: [UInt8] = []
            for chunk in chunks {
                guard chunk.identifier == node.identifier else { throw .malformedPayload }
                bytes += try joined(chunk)
            }
            return bytes
        }
    }

    /// The children of a constructed node with the given tag.
    static func children(of node: ASN1Node, _ identifier: ASN1Identifier) throws(AppReceiptError) -> [ASN1Node] {
        guard node.identifier == identifier, case .constructed(let nodes) = node.content else { throw .malformedPayload }
        return Array(nodes)
    }

    /// The one node inside an `[0] EXPLICIT` tag.
    private static func explicit(_ node: ASN1Node) throws(AppReceiptError) -> ASN1Node {
        let inner = try children(of: node, explicitZero)
        guard inner.count == 1 else { throw .malformedPayload }
        return inner[0]
    }
}
