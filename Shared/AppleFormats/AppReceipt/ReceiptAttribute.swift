import SwiftASN1

/// One field of a receipt: `ReceiptAttribute ::= SEQUENCE { type INTEGER,
/// version INTEGER, value OCTET STRING }`, the value itself DER of the
/// field's ASN.1 type. Both the app receipt and each in-app purchase are a SET
/// of these.
struct ReceiptAttribute {
    let type: Int64
    /// The still-encoded value; only fields Storekeeper reads are decoded (`ReceiptAttributeValue`).
    let value: [UInt8]

    /// The attributes of an encoded SET, in their order. Xcode's receipts wrap
    /// the app receipt's SET in one more OCTET STRING; that layer is opened.
    static func set(_ bytes: [UInt8]) throws(AppReceiptError) -> [ReceiptAttribute] {
        var node: ASN1Node
        do {
            node = try BER.parse(bytes)
            if node.identifier == .octetString { node = try BER.parse(try PKCS7Container.octets(of: node)) }
        } catch {
            throw .malformedPayload
        }
        var attributes: [ReceiptAttribute] = []
        for element in try PKCS7Container.children(of: node, .set) {
            attributes.append(try attribute(element))
        }
        return attributes
    }

    /// A later field of the sequence, if Apple ever adds one, is ignored, as Apple's own reader does.
    private static func attribute(_ node: ASN1Node) throws(AppReceiptError) -> ReceiptAttribute {
        let fields = try PKCS7Container.children(of: node, .sequence)
        guard fields.count >= 3, fields[1].identifier == .integer,
            let type = try? Int64(berEncoded: fields[0], withIdentifier: .integer), type >= 0
        else { throw .malformedPayload }
        return ReceiptAttribute(type: type, value: try PKCS7Container.octets(of: fields[2]))
    }
}
