import Foundation
import PropertyBased
import Testing

@testable import Gateway

@Suite("Receipt normalization: every damage repaired, byte-identical")
struct ReceiptDataNormalizerTests {
    /// The start of a real app receipt (fixtures: an iOS 7 sandbox receipt).
    static let real =
        "MIIT0QYJKoZIhvcNAQcCoIITwjCCE74CAQExCzAJBgUrDgMCGgUAMIIDcgYJKoZIhvcNAQcBoIIDYwSCA18xggNbMAoCAQgCAQEEAhYAMAoCARQCAQEEAgwAMAsCAQECAQEEAwIBADALAgELAgEBBAMCAQAwCwIBDwIBAQQDAgEAMAsCARACAQEEAwIBADALAgEZAgEBBAMCAQMwDAIBCgIBAQQEFgI0KzAMAgEOAgEBBAQCAgCJMA0CAQMCAQEEBQwDMTI3MA0CAQ0CAQEEBQIDAdUIMA0CARMCAQEEBQwDMS4wMA4CAQkCAQEEBgIEUDI1MzAYAgEEAgECBBCmVcaA3ztJaX0nKdZ+j5yxMBsCAQACAQEEEwwRUHJvZHVjdGlvblNhbmRib3gwHAIBBQIBAQQUuA6jKyMIv9c4yZyNwCeXU9Y7EAcw"

    static func normalize(_ text: String) -> Result<String, IntakeError> {
        Result { () throws(IntakeError) in try ReceiptDataNormalizer.normalize(text) }
    }

    @Test(arguments: [
        ("form decoding turned + into a space", { @Sendable (s: String) in s.replacingOccurrences(of: "+", with: " ") }),
        ("percent-encoded", { @Sendable (s: String) in s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }),
        ("only + and = percent-encoded", { @Sendable (s: String) in s.replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "=", with: "%3D") }),
        ("LF every 64 columns", { @Sendable (s: String) in lineBroken(s, every: 64, with: "\n") }),
        ("CRLF every 76 columns", { @Sendable (s: String) in lineBroken(s, every: 76, with: "\r\n") }),
        ("tabs and a trailing newline", { @Sendable (s: String) in "\t" + s + "\n" }),
        ("base64url without padding", { @Sendable (s: String) in base64url(s) }),
        ("padding removed", { @Sendable (s: String) in s.replacingOccurrences(of: "=", with: "") }),
        ("a data URL", { @Sendable (s: String) in "data:application/octet-stream;base64," + s }),
        ("line breaks then percent-encoded", { @Sendable (s: String) in lineBroken(s, every: 64, with: "\r\n").addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }),
    ] as [(String, @Sendable (String) -> String)])
    func aRealReceiptSurvivesEachDamage(_ name: String, _ damage: @Sendable (String) -> String) throws {
        #expect(Self.normalize(damage(Self.real)) == .success(Self.real), "\(name)")
    }

    @Test func canonicalInputIsUnchanged() throws {
        #expect(Self.normalize(Self.real) == .success(Self.real))
        #expect(Self.normalize("QQ==") == .success("QQ=="))
    }

    @Test(arguments: ["", "   ", "\n", "MII*T0", "QQ==QQ==", "Q", "QR==", "QUJ=", "%ZZ", "MIIT%2"])
    func damageBeyondRepairIsRefused(_ text: String) {
        guard case .failure(let error) = Self.normalize(text) else {
            Issue.record("accepted \(text.debugDescription)")
            return
        }
        #expect(error.code == .badReceiptEncoding)
        #expect(text.count < 4 || !error.message.contains(text), "the message never echoes the receipt")
    }

    @Test func canonicalIsWhatFoundationsDecodeThenEncodeRoundTripAccepts() async {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        await propertyCheck(count: 1_000, input: Gen.int(in: 0...63).array(of: 2...40)) { sextets in
            let unpadded = sextets.map { alphabet[$0] }
            guard unpadded.count % 4 != 1 else { return }
            let text = String(decoding: unpadded, as: UTF8.self) + String(repeating: "=", count: (4 - unpadded.count % 4) % 4)
            let roundTrips = Data(base64Encoded: text)?.base64EncodedString() == text
            #expect(ReceiptDataNormalizer.hasCanonicalEnd(unpadded) == roundTrips, "\(text)")
            #expect((try? ReceiptDataNormalizer.normalize(text)) == (roundTrips ? text : nil))
        }
    }

    /// The fast path takes exactly the texts that are their own canonical spelling, `=` anywhere included.
    @Test func theFastPathTakesOnlyWhatFoundationsRoundTripKeeps() async {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)
        await propertyCheck(count: 2_000, input: Gen.int(in: 0...64).array(of: 0...24)) { indices in
            let text = String(decoding: indices.map { alphabet[$0] }, as: UTF8.self)
            let roundTrips = Data(base64Encoded: text)?.base64EncodedString() == text && !text.isEmpty
            #expect(ReceiptDataNormalizer.isCanonical(text) == roundTrips, "\(text)")
        }
        #expect(ReceiptDataNormalizer.isCanonical(Self.real))
        #expect(!ReceiptDataNormalizer.isCanonical(Self.real + "\n"))
    }

    @Test func aMegabyteReceiptIsNormalizedWhole() throws {
        let bytes = (0..<786_432).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let canonical = Data(bytes).base64EncodedString()
        let damaged = Self.lineBroken(canonical, every: 76, with: "\r\n").replacingOccurrences(of: "+", with: " ")
        #expect(Self.normalize(damaged) == .success(canonical))
    }

    @Test func anyReceiptDamagedAnyWayComesBackByteIdentical() async {
        await propertyCheck(
            count: 400, input: Gen.uint8(in: 0...255).array(of: 1...700), Gen.int(in: 0...2), Gen.int(in: 0...511),
            Gen.int(in: 4...120)
        ) { content, shape, damages, columns in
            let canonical = Data(Self.receipt(content, shape: shape)).base64EncodedString()
            let damaged = Self.damaged(canonical, damages, columns: columns)
            #expect(Self.normalize(damaged) == .success(canonical), "shape \(shape) damages \(damages) columns \(columns)")
        }
    }

    @Test("Defect 9: a leading space is trimmed, not turned into a +")
    func aLeadingSpaceIsNotAPlus() throws {
        for name in ["production-2024-sha256.b64", "sandbox-2025-g5.b64", "xcode-app-receipt-empty.b64", "ios6-transaction-receipt-sandbox-2012.b64"] {
            let receipt = try Self.fixture(name)
            for padded in [" " + receipt, "  \n" + receipt, " " + receipt + " ", receipt + " \n", "\t " + receipt + "\r\n "] {
                #expect(Self.normalize(padded) == .success(receipt), "\(name) \(padded.prefix(3).debugDescription)")
            }
        }
    }

    @Test("Defect 9: a receipt's last + that form decoding turned into a space is restored, whitespace after it trimmed")
    func aTrailingPlusIsRestored() async {
        await propertyCheck(count: 200, input: Gen.uint8(in: 0...255).array(of: 2...600), Gen.int(in: 0...3)) { content, extra in
            let canonical = Data(Self.derEndingInPlus(content)).base64EncodedString()
            #expect(canonical.hasSuffix("+"))
            let formDecoded = canonical.replacingOccurrences(of: "+", with: " ")
            let withAdded = " " + formDecoded + ["", " ", "\n", " \r\n"][extra]
            #expect(Self.normalize(withAdded) == .success(canonical), "extra \(extra)")
        }
    }

    /// The receipt shapes Apple issues: 0, a DER SEQUENCE of definite length
    /// (App Store receipts, `MII...`); 1, BER of indefinite length (Xcode's,
    /// `MIA...`); 2, an iOS 6 transaction receipt (a text plist).
    static func receipt(_ content: [UInt8], shape: Int) -> [UInt8] {
        switch shape {
        case 0: return derHeader(length: content.count) + content
        case 1: return [0x30, 0x80] + content + [0x00, 0x00]
        default:
            let text = "{\n\t\"purchase-info\" = \"\(Data(content).base64EncodedString())\";\n}" + (content.count % 2 == 0 ? "\n" : "")
            return Array(text.utf8)
        }
    }

    static func derHeader(length: Int) -> [UInt8] {
        guard length >= 128 else { return [0x30, UInt8(length)] }
        let octets = length < 256 ? [UInt8(length)] : [UInt8(length >> 8), UInt8(length & 0xFF)]
        return [0x30, 0x80 | UInt8(octets.count)] + octets
    }

    /// A definite-length DER receipt whose base64 ends with `+`: a whole number
    /// of 3-byte groups, the last byte's low six bits 62.
    static func derEndingInPlus(_ content: [UInt8]) -> [UInt8] {
        var length = content.count
        while (derHeader(length: length).count + length) % 3 != 0 { length += 1 }
        var body = content + Array(repeating: 0x41, count: length - content.count)
        body[body.count - 1] = body[body.count - 1] & 0xC0 | 0x3E
        return derHeader(length: length) + body
    }

    static func damaged(_ canonical: String, _ damages: Int, columns: Int) -> String {
        var text = canonical
        if damages & 1 != 0 { text = base64url(text) }
        if damages & 2 != 0 { text = text.replacingOccurrences(of: "=", with: "") }
        if damages & 4 != 0 { text = lineBroken(text, every: columns, with: damages & 8 != 0 ? "\r\n" : "\n") }
        if damages & 16 != 0 { text = "data:application/octet-stream;base64," + text }
        if damages & 32 != 0 {
            text = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        } else if damages & 64 != 0 {
            // A form-decoded body: every + became a space.
            text = text.replacingOccurrences(of: "+", with: " ")
        }
        if damages & 128 != 0 { text = [" ", "\n", " \t"][columns % 3] + text }
        if damages & 256 != 0 { text += [" ", "\n", "\r\n ", "  "][columns % 4] }
        return text
    }

    static func fixture(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("GatewayTests/Fixtures/receipts/\(name)")
        return try String(contentsOf: url, encoding: .utf8).filter { !$0.isWhitespace }
    }

    @Test func anyForeignCharacterIsRefused() async {
        await propertyCheck(
            count: 200, input: Gen.uint8(in: 0...255).array(of: 3...60), Gen.int(in: 0...1_000)
        ) { bytes, position in
            var characters = Array(Data(bytes).base64EncodedString())
            let foreign: [Character] = ["*", "!", "$", "#", "~", "é", "\"", "\u{0}", "<", ":"]
            characters.insert(foreign[position % foreign.count], at: position % characters.count)
            guard case .failure(let error) = Self.normalize(String(characters)) else {
                Issue.record("accepted a receipt with a foreign character")
                return
            }
            #expect(error.code == .badReceiptEncoding)
        }
    }

    static func lineBroken(_ text: String, every columns: Int, with separator: String) -> String {
        var lines: [Substring] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append(rest.prefix(columns))
            rest = rest.dropFirst(columns)
        }
        return lines.joined(separator: separator)
    }

    static func base64url(_ text: String) -> String {
        text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
