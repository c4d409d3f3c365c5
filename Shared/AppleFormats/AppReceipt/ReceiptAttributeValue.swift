import SwiftASN1

/// Decodes the value of a receipt attribute Storekeeper reads. A value of
/// another ASN.1 type than the field's is `malformedAttribute`: a receipt
/// that says its bundle is an integer is not one to trust any id from.
enum ReceiptAttributeValue {
    /// UTF8String, as Apple documents; IA5String and PrintableString too,
    /// because Apple has not used one string type for every field.
    static func string(_ value: [UInt8]) throws(AppReceiptError) -> String {
        let node = try parsed(value)
        guard [ASN1Identifier.utf8String, .ia5String, .printableString].contains(node.identifier),
            let text = String(validating: try PKCS7Container.joined(node), as: UTF8.self)
        else { throw .malformedAttribute }
        return text
    }

    /// An INTEGER that fits Int64 and is not negative (web order line item ids take 7 bytes).
    static func integer(_ value: [UInt8]) throws(AppReceiptError) -> Int64 {
        guard let integer = try? Int64(berEncoded: try parsed(value), withIdentifier: .integer), integer >= 0 else {
            throw .malformedAttribute
        }
        return integer
    }

    /// An INTEGER flag: 0 is false, anything else true.
    static func flag(_ value: [UInt8]) throws(AppReceiptError) -> Bool { try integer(value) != 0 }

    /// A date as text (`ReceiptDate`); the empty string is "none", which the
    /// App Store writes for a purchase never cancelled or not a subscription.
    static func date(_ value: [UInt8]) throws(AppReceiptError) -> Int64? {
        let text = try string(value)
        if text.isEmpty { return nil }
        guard let milliseconds = ReceiptDate.milliseconds(text) else { throw .malformedAttribute }
        return milliseconds
    }

    private static func parsed(_ value: [UInt8]) throws(AppReceiptError) -> ASN1Node {
        do {
            return try BER.parse(value)
        } catch {
            throw .malformedAttribute
        }
    }
}
