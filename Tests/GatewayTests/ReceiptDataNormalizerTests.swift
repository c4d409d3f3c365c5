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

    @Test func aMegabyteReceiptIsNormalizedWhole() throws {
        let bytes = (0..<786_432).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let canonical = Data(bytes).base64EncodedString()
        let damaged = Self.lineBroken(canonical, every: 76, with: "\r\n").replacingOccurrences(of: "+", with: " ")
        #expect(Self.normalize(damaged) == .success(canonical))
    }

    @Test func anyReceiptDamagedAnyWayComesBackByteIdentical() async {
        await propertyCheck(
            count: 300, input: Gen.uint8(in: 0...255).array(of: 1...700), Gen.int(in: 0...127), Gen.int(in: 4...120)
        ) { bytes, damages, columns in
            let canonical = Data(bytes).base64EncodedString()
            var text = canonical
            if damages & 1 != 0 { text = Self.base64url(text) }
            if damages & 2 != 0 { text = text.replacingOccurrences(of: "=", with: "") }
            if damages & 4 != 0 { text = Self.lineBroken(text, every: columns, with: damages & 8 != 0 ? "\r\n" : "\n") }
            if damages & 16 != 0 { text = "data:application/octet-stream;base64," + text }
            if damages & 32 != 0 {
                text = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            } else if damages & 64 != 0 {
                // A form-decoded body: every + became a space.
                text = text.replacingOccurrences(of: "+", with: " ")
            }
            #expect(Self.normalize(text) == .success(canonical), "damages \(damages) columns \(columns)")
        }
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
