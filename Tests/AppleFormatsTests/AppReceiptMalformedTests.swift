import Foundation
import PropertyBased
import Testing

@testable import AppleFormats

/// Whatever a client sends, the parser returns a receipt or throws
/// `AppReceiptError` (the gateway's `400 bad_receipt_encoding`): never a
/// crash, never another error.
@Suite struct AppReceiptMalformedTests {
    static func outcome(_ bytes: [UInt8]) -> Result<AppReceipt, AppReceiptError> {
        Result { () throws(AppReceiptError) in try AppReceiptParser.parse(der: bytes) }
    }

    static func reason(_ bytes: [UInt8]) -> AppReceiptError? {
        if case .failure(let error) = outcome(bytes) { error } else { nil }
    }

    @Test func unknownAttributesAreSkipped() throws {
        let receipt = try AppReceiptParser.parse(der: ReceiptBuilder.container(ReceiptBuilder.payload(transactionIDs: ["42", "43"])))
        #expect(receipt.bundleID == "com.example.app")
        #expect(receipt.transactionIDs == ["42", "43"])
        #expect(receipt.inAppPurchases.map(\.quantity) == [1, 1])
    }

    @Test(arguments: ["not a receipt!", "MIAG*CSqG", "A"])
    func textThatIsNotBase64(_ text: String) {
        #expect(throws: AppReceiptError.notBase64) { try AppReceiptParser.parse(base64: text) }
    }

    @Test func containersThatAreNotSignedData() throws {
        let payload = ReceiptBuilder.payload(transactionIDs: ["1"])
        let real = try AppReceiptFixture.der("production-2024-sha256")
        let iOS6 = try AppReceiptFixture.der("ios6-transaction-receipt-sandbox-2012")
        for bytes in [
            [], [0x30], [1, 2, 3, 4], iOS6, Array(real.prefix(100)), real + [0, 0],
            ReceiptBuilder.container(payload, contentType: ReceiptBuilder.envelopedDataOID),
            ReceiptBuilder.tlv(0x30, ReceiptBuilder.signedDataOID),
            ReceiptBuilder.tlv(0x30, ReceiptBuilder.signedDataOID + ReceiptBuilder.tlv(0xA0, ReceiptBuilder.integer(1))),
            ReceiptBuilder.tlv(0x31, ReceiptBuilder.signedDataOID + ReceiptBuilder.tlv(0xA0, [])),
        ] {
            #expect(Self.reason(bytes) == .notSignedData)
        }
    }

    @Test func signedDataWithoutReceiptContent() {
        let payload = ReceiptBuilder.payload(transactionIDs: ["1"])
        let withoutContent = ReceiptBuilder.tlv(
            0x30,
            ReceiptBuilder.signedDataOID
                + ReceiptBuilder.tlv(
                    0xA0,
                    ReceiptBuilder.tlv(
                        0x30,
                        ReceiptBuilder.integer(1) + ReceiptBuilder.set([])
                            + ReceiptBuilder.tlv(0x30, ReceiptBuilder.dataOID) + ReceiptBuilder.set([]))))
        #expect(Self.reason(withoutContent) == .noContent)
        #expect(Self.reason(ReceiptBuilder.container(payload, encapsulatedType: ReceiptBuilder.signedDataOID)) == .noContent)
    }

    @Test func payloadsThatAreNotAnAttributeSet() {
        let attribute = ReceiptBuilder.attribute(2, ReceiptBuilder.utf8("com.example.app"))
        for payload in [
            [], ReceiptBuilder.tlv(0x30, attribute), ReceiptBuilder.set([attribute]) + [0],
            ReceiptBuilder.set([ReceiptBuilder.tlv(0x30, ReceiptBuilder.integer(2) + ReceiptBuilder.integer(1))]),
            ReceiptBuilder.set([ReceiptBuilder.tlv(0x30, ReceiptBuilder.tlv(0x02, [0xFF]) + ReceiptBuilder.integer(1) + ReceiptBuilder.tlv(0x04, []))]),
            ReceiptBuilder.set([ReceiptBuilder.tlv(0x30, ReceiptBuilder.integer(2) + ReceiptBuilder.integer(1) + ReceiptBuilder.utf8("x"))]),
            ReceiptBuilder.set([ReceiptBuilder.attribute(17, ReceiptBuilder.utf8("not a set"))]),
        ] {
            #expect(Self.reason(ReceiptBuilder.container(payload)) == .malformedPayload)
        }
    }

    @Test func readFieldsOfTheWrongType() {
        for attribute in [
            ReceiptBuilder.attribute(2, ReceiptBuilder.integer(7)),
            ReceiptBuilder.attribute(2, ReceiptBuilder.tlv(0x0C, [0xC3, 0x28])),  // not UTF-8
            ReceiptBuilder.attribute(2, [0x0C, 0x05, 0x61]),  // cut short
            ReceiptBuilder.attribute(12, ReceiptBuilder.ia5("yesterday")),
            ReceiptBuilder.attribute(12, ReceiptBuilder.ia5("2023-02-30T00:00:00Z")),
            ReceiptBuilder.attribute(17, ReceiptBuilder.set([ReceiptBuilder.attribute(1701, ReceiptBuilder.utf8("1"))])),
            ReceiptBuilder.attribute(17, ReceiptBuilder.set([ReceiptBuilder.attribute(1711, ReceiptBuilder.tlv(0x02, [0x80]))])),
        ] {
            #expect(Self.reason(ReceiptBuilder.container(ReceiptBuilder.set([attribute]))) == .malformedAttribute)
        }
    }

    /// No prefix of a real receipt is one (every third length of the large ones).
    @Test(arguments: AppReceiptFixture.all)
    func everyTruncationThrows(_ name: String) throws {
        let bytes = try AppReceiptFixture.der(name)
        let step = bytes.count > 20_000 ? 97 : bytes.count > 3_000 ? 3 : 1
        for length in stride(from: 0, to: bytes.count, by: step) {
            #expect(Self.reason(Array(bytes[..<length])) != nil, "a \(length)-byte prefix of \(name) parsed")
        }
    }

    /// Flipped bits anywhere: a receipt (the signature is not checked, so most
    /// flips outside the payload change nothing) or the typed error, never a crash.
    @Test func bitFlipsNeverCrash() async throws {
        let receipts = try AppReceiptFixture.all.map(AppReceiptFixture.der)
        await propertyCheck(count: 600, input: Gen.int(in: 0...receipts.count - 1), Gen.int(in: 0...1_000_000), Gen.int(in: 1...4)) {
            which, position, flips in
            var bytes = receipts[which]
            for flip in 0..<flips {
                let bit = (position &* (flip + 1) &* 7_919) % (bytes.count * 8)
                bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            }
            _ = Self.reason(bytes)
        }
    }

    /// Flips inside the small receipt's header and payload, where they matter.
    @Test func flipsInAHandMadeReceiptThrowOrReadAReceipt() async {
        let bytes = ReceiptBuilder.container(ReceiptBuilder.payload(transactionIDs: ["1000000000000001"]))
        await propertyCheck(count: 400, input: Gen.int(in: 0...(bytes.count * 8 - 1))) { bit in
            var flipped = bytes
            flipped[bit / 8] ^= 1 << UInt8(bit % 8)
            if case .success(let receipt) = Self.outcome(flipped) { #expect(receipt.inAppPurchases.count <= 1) }
        }
    }

    @Test func randomBytesAreRefused() async {
        await propertyCheck(count: 400, input: Gen.uint8(in: 0...255).array(of: 0...600)) { bytes in
            #expect(Self.reason(bytes) != nil)
            #expect(Self.reason([0x30, 0x80] + bytes) != nil)
        }
    }
}
