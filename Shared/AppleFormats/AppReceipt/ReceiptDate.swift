/// The receipt's dates: RFC 3339 text in an IA5String, `2013-08-01T07:00:00Z`.
/// Xcode's receipts of 2020 wrote the offset without its colon
/// (`2020-07-22T18:33:15+0100`), and a fraction of a second is legal RFC 3339:
/// all three are read. Hand-written because Foundation's ISO 8601 formatter
/// takes one layout per configuration and is not Sendable.
enum ReceiptDate {
    /// Milliseconds since the epoch (UTC); nil for text that is not such a date.
    static func milliseconds(_ text: String) -> Int64? {
        var reader = Reader(bytes: Array(text.utf8))
        guard let year = reader.digits(4), reader.skip("-"), let month = reader.digits(2), reader.skip("-"),
            let day = reader.digits(2), reader.skip("T") || reader.skip("t"), let hour = reader.digits(2), reader.skip(":"),
            let minute = reader.digits(2), reader.skip(":"), let second = reader.digits(2)
        else { return nil }
        var millisecond: Int64 = 0
        if reader.skip(".") {
            guard let fraction = reader.fraction() else { return nil }
            millisecond = fraction
        }
        guard let offsetMinutes = reader.offset(), reader.atEnd,
            (1...12).contains(month), (1...days(inMonth: month, of: year)).contains(day),
            hour < 24, minute < 60, second <= 60  // 60: a leap second
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second
        return seconds * 1_000 + millisecond
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
    /// `days_from_civil`, public domain arithmetic).
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func days(inMonth month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func digits(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// The digits after the point, as milliseconds (rounded down).
        mutating func fraction() -> Int64? {
            var scale: Int64 = 100
            var value: Int64 = 0
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                value += Int64(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            return index > start ? value : nil
        }

        /// `Z`, or `+hh:mm` / `-hhmm`, as minutes east of UTC.
        mutating func offset() -> Int64? {
            if skip("Z") || skip("z") { return 0 }
            let sign: Int64
            if skip("+") {
                sign = 1
            } else if skip("-") {
                sign = -1
            } else {
                return nil
            }
            guard let hours = digits(2) else { return nil }
            _ = skip(":")
            guard let minutes = digits(2), hours < 24, minutes < 60 else { return nil }
            return sign * (hours * 60 + minutes)
        }
    }
}
