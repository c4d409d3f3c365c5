import Contracts
import SwiftASN1

/// The app receipt the simulator gives an app, in Apple's layout: a PKCS#7
/// ContentInfo of SignedData whose encapsulated `data` is the SET of receipt
/// attributes (Apple's "Receipt Fields" and "In-App Purchase Receipt
/// Fields"), so `AppReceiptParser`, and anything else that reads receipts
/// locally, reads it as it reads the App Store's.
///
/// Unsigned (no certificates, no SignerInfo): Storekeeper's `server_api`
/// mode never trusts a receipt's own signature (nor does Apple's
/// ReceiptUtility), and the simulator's verifyReceipt knows its receipts by
/// their bytes. Each receipt carries 16 random bytes as its opaque value and
/// 20 as its SHA-1 hash (Apple's come from a device; here from nobody's), so
/// two receipts of the same purchases differ, as two of Apple's do.
enum SimAppReceipt {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]

    /// The receipt's DER. Throws only where swift-asn1 declares it may (integers), which values of ours never do.
    static func der(
        bundleID: String, environment: AppleEnvironment, createdMs: Int64, transactions: [SimTransaction]
    ) throws -> [UInt8] {
        let payload = try encoded { coder in
            try coder.appendConstructedNode(identifier: .set) { set in
                try attribute(0, utf8(environment == .sandbox ? "ProductionSandbox" : "Production"), &set)
                try attribute(2, utf8(bundleID), &set)
                try attribute(3, utf8("1"), &set)
                try attribute(4, (0..<16).map { _ in UInt8.random(in: 0...255) }, &set)
                try attribute(5, (0..<20).map { _ in UInt8.random(in: 0...255) }, &set)
                try attribute(12, date(createdMs), &set)
                try attribute(18, date(transactions.map(\.originalPurchaseMs).min() ?? createdMs), &set)
                try attribute(19, utf8("1.0"), &set)
                for transaction in transactions { try attribute(17, try inAppPurchase(transaction), &set) }
            }
        }
        return try encoded { coder in
            try coder.appendConstructedNode(identifier: .sequence) { contentInfo in
                try contentInfo.serialize(signedDataOID)
                try contentInfo.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { explicit in
                    try explicit.appendConstructedNode(identifier: .sequence) { signedData in
                        try signedData.serialize(1)  // version
                        signedData.appendConstructedNode(identifier: .set) { _ in }  // digestAlgorithms: none, nothing signed
                        try signedData.appendConstructedNode(identifier: .sequence) { encapsulated in
                            try encapsulated.serialize(dataOID)
                            encapsulated.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { content in
                                content.appendPrimitiveNode(identifier: .octetString) { $0 += payload }
                            }
                        }
                        signedData.appendConstructedNode(identifier: .set) { _ in }  // signerInfos: none
                    }
                }
            }
        }
    }

    /// Attribute 17: one purchase, as the App Store writes it (empty dates for "none").
    private static func inAppPurchase(_ t: SimTransaction) throws -> [UInt8] {
        try encoded { coder in
            try coder.appendConstructedNode(identifier: .set) { set in
                try attribute(1701, integer(t.quantity), &set)
                try attribute(1702, utf8(t.productID), &set)
                try attribute(1703, utf8(t.id), &set)
                try attribute(1704, date(t.purchaseMs), &set)
                try attribute(1705, utf8(t.originalID), &set)
                try attribute(1706, date(t.originalPurchaseMs), &set)
                try attribute(1708, date(t.expiresMs), &set)
                if let line = t.webOrderLineItemID.flatMap(Int.init) { try attribute(1711, integer(line), &set) }
                try attribute(1712, date(t.cancellationMs), &set)
                try attribute(1713, integer(0), &set)
                try attribute(1719, integer(0), &set)
            }
        }
    }

    /// `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
    private static func attribute(_ type: Int, _ value: [UInt8], _ set: inout DER.Serializer) throws {
        try set.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.serialize(type)
            try sequence.serialize(1)
            sequence.appendPrimitiveNode(identifier: .octetString) { $0 += value }
        }
    }

    private static func encoded(_ body: (inout DER.Serializer) throws -> Void) rethrows -> [UInt8] {
        var coder = DER.Serializer()
        try body(&coder)
        return coder.serializedBytes
    }

    private static func utf8(_ text: String) -> [UInt8] {
        encoded { $0.appendPrimitiveNode(identifier: .utf8String) { $0 += Array(text.utf8) } }
    }

    private static func integer(_ value: Int) throws -> [UInt8] { try encoded { try $0.serialize(value) } }

    /// An IA5String RFC 3339 date, `2026-11-24T17:54:59Z`; empty for none.
    private static func date(_ milliseconds: Int64?) -> [UInt8] {
        let text = milliseconds.map { SimDate.text($0, separator: "T", zone: "Z") } ?? ""
        return encoded { $0.appendPrimitiveNode(identifier: .ia5String) { $0 += Array(text.utf8) } }
    }
}
