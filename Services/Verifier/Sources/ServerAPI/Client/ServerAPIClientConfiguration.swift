import StorekeeperCore

/// What the Server API client needs, read once at start-up: Apple's two base
/// URLs, the credentials (with the key loaded and checked), the app, and the
/// time limits of Storekeeper's other Apple calls.
public struct ServerAPIClientConfiguration: Sendable {
    /// `STOREKEEPER_APPLE_API_PRODUCTION_URL`.
    public var productionURL: String
    /// `STOREKEEPER_APPLE_API_SANDBOX_URL`.
    public var sandboxURL: String
    public var credentials: ServerAPICredentials
    /// `STOREKEEPER_APPLE_APP_ID`: production answers must name it.
    public var appAppleID: Int64
    /// `STOREKEEPER_APPLE_CONNECT_TIMEOUT_MS`, per attempt.
    public var connectTimeout: Duration
    /// `STOREKEEPER_APPLE_ATTEMPT_TIMEOUT_MS`, per attempt.
    public var attemptTimeout: Duration
    /// `STOREKEEPER_VERIFY_DEADLINE_MS`: one call, every retry and page included, unless the caller names a deadline.
    public var deadline: Duration
    /// `STOREKEEPER_ACCEPT_SANDBOX`.
    public var acceptSandbox: Bool

    public init(
        productionURL: String, sandboxURL: String, credentials: ServerAPICredentials, appAppleID: Int64,
        connectTimeout: Duration, attemptTimeout: Duration, deadline: Duration, acceptSandbox: Bool
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.credentials = credentials
        self.appAppleID = appAppleID
        self.connectTimeout = connectTimeout
        self.attemptTimeout = attemptTimeout
        self.deadline = deadline
        self.acceptSandbox = acceptSandbox
    }

    /// From the process's configuration; nil when the Server API is off (no
    /// credentials set). Reads the `.p8` key: a missing, unreadable or
    /// wrong-curve key is a `ConfigurationError` naming the variable (exit 78).
    public static func load(_ configuration: StorekeeperConfiguration) throws(ConfigurationError) -> ServerAPIClientConfiguration? {
        guard let settings = configuration.serverAPI else { return nil }
        let apple = configuration.apple
        return ServerAPIClientConfiguration(
            productionURL: settings.productionURL, sandboxURL: settings.sandboxURL,
            credentials: ServerAPICredentials(
                issuerID: settings.issuerID, keyID: settings.keyID, bundleID: settings.bundleID,
                signingKey: try ServerAPISigningKey.load(file: settings.privateKeyFile)),
            appAppleID: settings.appAppleID, connectTimeout: apple.connectTimeout, attemptTimeout: apple.attemptTimeout,
            deadline: apple.verifyDeadline, acceptSandbox: apple.acceptSandbox)
    }
}
