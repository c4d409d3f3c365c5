/// A strict `application/x-www-form-urlencoded` reader: `&`-separated pairs,
/// `+` is a space, `%XX` escapes; a broken escape or a repeated key is refused
/// (a repeated `receipt-data` would make the request ambiguous).
enum FormURLEncoded {
    static func parse(_ body: [UInt8]) throws(IntakeError) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let key = try decode(Array(parts[0]))
            let value = parts.count > 1 ? try decode(Array(parts[1])) : ""
            guard fields[key] == nil else { throw .badRequest("the form repeats \(key.prefix(40))") }
            fields[key] = value
        }
        return fields
    }

    private static func decode(_ bytes: [UInt8]) throws(IntakeError) -> String {
        let spaced = bytes.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        guard let decoded = try? ReceiptDataNormalizer.percentDecoded(spaced) else {
            throw .badRequest("the form has a broken percent escape")
        }
        guard let text = String(validating: decoded, as: UTF8.self) else { throw .badRequest("the form is not UTF-8") }
        return text
    }
}
