import Verifier

/// App Store Server Notifications version 2 arrive as `{"signedPayload": "<JWS>"}`;
/// the verifier pool verifies and decodes the JWS.
enum NotificationV2Body {
    /// The JWS when the body is version 2, nil when it is not (version 1).
    static func signedPayload(of bytes: [UInt8]) throws(APIError) -> String? {
        guard let body = try? JSONValueParser.parse(bytes), body.object != nil else {
            throw .badRequest("the notification is not a JSON object")
        }
        guard let value = body["signedPayload"] else { return nil }
        guard case .string(let jws) = value, CompactJWSShape.matches(jws) else {
            throw .badRequest("signedPayload must be a compact JWS")
        }
        return jws
    }
}
