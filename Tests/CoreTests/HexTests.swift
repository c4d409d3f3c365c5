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
}
