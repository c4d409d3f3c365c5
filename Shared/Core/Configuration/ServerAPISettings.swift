/// The App Store Server API: the App Store Connect key that signs its tokens,
/// the app it speaks for, and Apple's two base URLs. Off (nil) when none of
/// the key's three variables is set; some but not all is a configuration
/// error naming the first missing one.
///
/// The key file is only named here: the verifiers and `storekeeper apple`
/// read and check it at start-up (`ServerAPIClientConfiguration`), the
/// processes that never use it never open it.
public struct ServerAPISettings: Sendable {
    /// `STOREKEEPER_APPLE_ISSUER_ID`: the tokens' `iss`.
    public var issuerID: String
    /// `STOREKEEPER_APPLE_KEY_ID`: the tokens' `kid`.
    public var keyID: String
    /// `STOREKEEPER_APPLE_PRIVATE_KEY_FILE`: the `.p8`.
    public var privateKeyFile: String
    /// `STOREKEEPER_APPLE_APP_ID`: required with the credentials; production answers must name it.
    public var appAppleID: Int64
    /// The tokens' `bid`: the first of `STOREKEEPER_BUNDLE_IDS` (the Server API speaks for one app).
    public var bundleID: String
    /// `STOREKEEPER_APPLE_API_PRODUCTION_URL`.
    public var productionURL: String
    /// `STOREKEEPER_APPLE_API_SANDBOX_URL`.
    public var sandboxURL: String

    public init?(reader: EnvironmentReader, apple: AppleSettings) throws(ConfigurationError) {
        typealias V = ConfigurationVariable
        let credentials: [V] = [.appleIssuerID, .appleKeyID, .applePrivateKeyFile]
        let set = credentials.filter { reader.raw($0) != nil }
        // URLs are checked even when the API is off: a typo there is a typo.
        let productionURL = try reader.httpURL(.appleAPIProductionURL) ?? ""
        let sandboxURL = try reader.httpURL(.appleAPISandboxURL) ?? ""
        guard !set.isEmpty else { return nil }
        if let missing = credentials.first(where: { reader.raw($0) == nil }) {
            throw ConfigurationError(
                variable: missing.rawValue,
                reason: "required with \(set.map(\.rawValue).joined(separator: " and ")): the App Store Server API needs all three")
        }
        guard let appAppleID = apple.appAppleID else {
            throw ConfigurationError(
                variable: V.appleAppID.rawValue,
                reason: "required with the App Store Server API credentials: production answers must carry this app's Apple ID")
        }
        guard let bundleID = apple.bundleIDs.first else {
            throw ConfigurationError(
                variable: V.bundleIDs.rawValue, reason: "required with the App Store Server API credentials: the app its tokens name")
        }
        self.issuerID = reader.raw(.appleIssuerID) ?? ""
        self.keyID = reader.raw(.appleKeyID) ?? ""
        self.privateKeyFile = reader.raw(.applePrivateKeyFile) ?? ""
        self.appAppleID = appAppleID
        self.bundleID = bundleID
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
    }
}
