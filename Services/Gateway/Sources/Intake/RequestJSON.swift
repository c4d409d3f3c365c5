import AppleFormats

/// A request body's JSON object, read by `JSONValueParser` and then field by
/// field, with the rules JSONDecoder applied when it read these bodies: an
/// absent or null field is nil, and a field of another type is refused by
/// name. (JSONDecoder cost the gateway about 35,000 instructions per receipt,
/// a third of reading the request; the parser a fraction of that.)
struct RequestJSON {
    private let object: [String: JSONValue]

    init(_ body: [UInt8]) throws(IntakeError) {
        // JSONDecoder refused text that is not UTF-8, where the parser would mend it.
        guard String(validating: body, as: UTF8.self) != nil, case .object(let object)? = try? JSONValueParser.parse(body)
        else { throw .badRequest("the body is not a JSON object") }
        self.object = object
    }

    func string(_ key: String) throws(IntakeError) -> String? {
        switch object[key] {
        case nil, .null?: nil
        case .string(let value)?: value
        default: throw Self.wrongType(key)
        }
    }

    /// One of Apple's ids (`transaction_id`): a string, as Apple writes them,
    /// or a whole number, as some clients send them.
    func appleID(_ key: String) throws(IntakeError) -> String? {
        if case .integer(let number)? = object[key] { return String(number) }
        return try string(key)
    }

    func bool(_ key: String) throws(IntakeError) -> Bool? {
        switch object[key] {
        case nil, .null?: nil
        case .bool(let value)?: value
        default: throw Self.wrongType(key)
        }
    }

    private static func wrongType(_ key: String) -> IntakeError {
        .badRequest("\(key) has the wrong type")
    }
}
