import Foundation
import PropertyBased
import Testing

@testable import AppleFormats

@Suite struct ReceiptDateTests {
    @Test(arguments: [
        ("2013-08-01T07:00:00Z", 1_375_340_400_000),
        ("2020-07-22T18:33:15+0100", 1_595_439_195_000),
        ("2020-07-22T18:33:15+01:00", 1_595_439_195_000),
        ("2020-07-22T12:03:15-05:30", 1_595_439_195_000),
        ("2023-10-19T01:45:36.25Z", 1_697_679_936_250),
        ("2023-10-19T01:45:36.123456Z", 1_697_679_936_123),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000),
        ("1970-01-01T00:00:00Z", 0),
        ("4001-01-01T00:00:00Z", 64_092_211_200_000),
    ] as [(String, Int64)])
    func readsTheFormsReceiptsUse(_ text: String, _ milliseconds: Int64) {
        #expect(ReceiptDate.milliseconds(text) == milliseconds)
    }

    @Test(arguments: [
        "", "2013-08-01", "2013-08-01T07:00:00", "2013-08-01 07:00:00Z", "2013-8-01T07:00:00Z", "2013-13-01T07:00:00Z",
        "2023-02-29T00:00:00Z", "2013-08-01T24:00:00Z", "2013-08-01T07:60:00Z", "2013-08-01T07:00:00.Z",
        "2013-08-01T07:00:00+1", "2013-08-01T07:00:00Z ", "2013-08-01 07:00:00 Etc/GMT", "２０１３-08-01T07:00:00Z",
    ])
    func refusesWhatIsNotOne(_ text: String) {
        #expect(ReceiptDate.milliseconds(text) == nil)
    }

    /// The day arithmetic against Foundation's Gregorian calendar, from 1600 (Foundation turns Julian before 1582) to 9999.
    @Test func dayCountAgreesWithFoundation() async {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        await propertyCheck(count: 500, input: Gen.int(in: 1_600...9_999), Gen.int(in: 1...12), Gen.int(in: 1...28)) {
            year, month, day in
            let date = calendar.date(from: DateComponents(year: year, month: month, day: day))!
            let expected = Int64((date.timeIntervalSince1970 / 86_400).rounded())
            #expect(ReceiptDate.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day)) == expected)
        }
    }
}
