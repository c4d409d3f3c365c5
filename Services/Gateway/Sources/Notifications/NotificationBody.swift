import AppleFormats

/// What Apple POSTed to /v1/notifications/apple, parsed once: version 2 is
/// `{"signedPayload": "<JWS>"}` (the verifier pool verifies and decodes the
/// JWS); anything else is a version 1 body.
enum NotificationBody {
    case version1(JSONValue)
    case version2(signedPayload: String)

    static func read(_ bytes: [UInt8]) throws(APIError) -> NotificationBody {
        guard let body = try? JSONValueParser.parse(bytes), body.object != nil else {
            throw .badRequest("the notification is not a JSON object")
        }
        guard let value = body["signedPayload"] else { return .version1(body) }
        guard case .string(let jws) = value, CompactJWSShape.matches(jws) else {
            throw .badRequest("signedPayload must be a compact JWS")
        }
        return .version2(signedPayload: jws)
    }
}
