/// Who the Server API's tokens speak for: the App Store Connect key (its
/// issuer, its id and the private key) and the app (`bid`).
public struct ServerAPICredentials: Sendable {
    /// `STOREKEEPER_APPLE_ISSUER_ID`: `iss`.
    public let issuerID: String
    /// `STOREKEEPER_APPLE_KEY_ID`: the header's `kid`.
    public let keyID: String
    /// `bid`: the app the calls are about (the first of `STOREKEEPER_BUNDLE_IDS`).
    public let bundleID: String
    let signingKey: ServerAPISigningKey

    public init(issuerID: String, keyID: String, bundleID: String, signingKey: ServerAPISigningKey) {
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.signingKey = signingKey
    }
}
