import Foundation
import Testing

@testable import StorekeeperCore

@Suite struct HexTests {
    @Test func everyByteIsTwoLowerCaseDigits() {
        #expect(Hex.lowercase([]) == "")
        #expect(Hex.lowercase([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
        let all = Hex.lowercase((0...255).map { UInt8($0) })
        #expect(all.count == 512)
        #expect(all == (0...255).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined())
    }

    @Test func aUUIDIsSpelledAsFoundationSpellsIt() throws {
        for _ in 0..<200 {
            let uuid = UUID()
            #expect(Hex.lowercase(uuid) == uuid.uuidString.lowercased())
        }
        let fixed = try #require(UUID(uuidString: "00FF10A5-0B0C-4D0E-8F00-0123456789AB"))
        #expect(Hex.lowercase(fixed) == "00ff10a5-0b0c-4d0e-8f00-0123456789ab")
    }
}
