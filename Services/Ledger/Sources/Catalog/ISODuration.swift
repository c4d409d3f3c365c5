import Foundation

/// An ISO 8601 duration (`P1Y`, `P3M`, `P1W`, `P30D`, `PT12H`, `P1Y2M10DT2H30M`),
/// added to a time as calendar arithmetic in UTC, so a month after January
/// 31 is the end of February, as Apple counts subscription months.
public struct ISODuration: Equatable, Sendable, CustomStringConvertible {
    public let components: DateComponents
    public let description: String

    /// nil for anything that is not such a duration, or a zero one.
    public init?(_ text: String) {
        var components = DateComponents()
        var number = ""
        var inTime = false
        var timeFields = 0
        var any = false
        var characters = Substring(text)
        guard characters.popFirst() == "P" else { return nil }
        for character in characters {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            if character == "T", number.isEmpty, !inTime {
                inTime = true
                continue
            }
            guard let value = Int(number), value >= 0, value <= 100_000 else { return nil }
            number = ""
            any = any || value > 0
            if inTime { timeFields += 1 }
            switch (character, inTime) {
            case ("Y", false): components.year = value
            case ("M", false): components.month = value
            case ("W", false): components.day = (components.day ?? 0) + 7 * value
            case ("D", false): components.day = (components.day ?? 0) + value
            case ("H", true): components.hour = value
            case ("M", true): components.minute = value
            case ("S", true): components.second = value
            default: return nil
            }
        }
        guard number.isEmpty, any, !inTime || timeFields > 0 else { return nil }
        self.components = components
        self.description = text
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// `milliseconds` (since the epoch) plus this duration.
    public func added(to milliseconds: Int64) -> Int64 {
        let start = Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
        guard let end = Self.calendar.date(byAdding: components, to: start) else { return milliseconds }
        return Int64((end.timeIntervalSince1970 * 1_000).rounded())
    }
}
