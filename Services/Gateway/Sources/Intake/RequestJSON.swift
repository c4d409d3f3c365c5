import AppleFormats

/// A request body's JSON object, read by `JSONValueParser` and then field by
/// field: an absent or null field is nil, and a field of another type is
/// refused by name, as when JSONDecoder read these bodies. (It cost the gateway
/// about 35,000 instructions per receipt, a third of reading the request; the
/// parser a fraction of that.) Where this is stricter: a repeated key is
/// refused (JSONDecoder kept the first `user_id` of two, silently), the text
/// must be UTF-8 (after an optional byte-order mark), and so must every
/// escape: a lone surrogate (`"\uD800"`) is refused, where reading it as
/// U+FFFD would make two different user ids one.
struct RequestJSON {
    private let object: JSONObject

    init(_ body: [UInt8]) throws(IntakeError) {
        let text = body.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(body.dropFirst(3)) : body
        // Not UTF-8: refused, where the parser would mend it.
        guard String(validating: text, as: UTF8.self) != nil else { throw .badRequest("the body is not a JSON object") }
        let value: JSONValue
        do {
            value = try JSONValueParser.parse(text, rejectingAmbiguity: true)
        } catch {
            let message =
                switch error.ambiguity {
                case .repeatedKey?: "the body repeats a field"
                case .loneSurrogate?: "the body escapes half of a UTF-16 surrogate pair"
                case nil: "the body is not a JSON object"
                }
            throw .badRequest(message)
        }
        guard case .object(let object) = value else { throw .badRequest("the body is not a JSON object") }
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
