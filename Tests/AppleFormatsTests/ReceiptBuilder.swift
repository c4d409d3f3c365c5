/// Small receipts made by hand in DER, for the shapes no real receipt has:
/// each malformed layer in turn, and attribute types Storekeeper skips.
enum ReceiptBuilder {
    static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    static let dataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    static let envelopedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x03]

    /// Tag, definite length, content.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        guard content.count >= 0x80 else { return [tag, UInt8(content.count)] + content }
        var length: [UInt8] = []
        var rest = content.count
        while rest > 0 {
            length.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [tag, 0x80 | UInt8(length.count)] + length + content
    }

    /// A non-negative INTEGER, minimally encoded.
    static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        repeat {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        } while rest > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static func set(_ elements: [[UInt8]]) -> [UInt8] { tlv(0x31, elements.flatMap { $0 }) }

    /// `SEQUENCE { type, version 1, OCTET STRING value }`.
    static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value))
    }

    /// A receipt whose in-app purchases have these transaction ids, and types Storekeeper skips.
    static func payload(bundleID: String = "com.example.app", transactionIDs: [String]) -> [UInt8] {
        let purchases = transactionIDs.map { id in
            attribute(17, set([attribute(1703, utf8(id)), attribute(1799, [0xDE, 0xAD]), attribute(1701, integer(1))]))
        }
        return set([attribute(2, utf8(bundleID)), attribute(9999, [0xFF, 0xFF, 0xFF])] + purchases)
    }

    /// ContentInfo { signedData, [0] SignedData { 1, {}, { data, [0] OCTET STRING payload }, {} } }.
    static func container(
        _ payload: [UInt8], contentType: [UInt8] = signedDataOID, encapsulatedType: [UInt8] = dataOID
    ) -> [UInt8] {
        container(octets: tlv(0x04, payload), contentType: contentType, encapsulatedType: encapsulatedType)
    }

    /// The same with the encapsulated OCTET STRING given whole (tag, length and all).
    static func container(
        octets: [UInt8], contentType: [UInt8] = signedDataOID, encapsulatedType: [UInt8] = dataOID
    ) -> [UInt8] {
        let encapsulated = tlv(0x30, encapsulatedType + tlv(0xA0, octets))
        let signedData = tlv(0x30, integer(1) + set([]) + encapsulated + set([]))
        return tlv(0x30, contentType + tlv(0xA0, signedData))
    }
}
