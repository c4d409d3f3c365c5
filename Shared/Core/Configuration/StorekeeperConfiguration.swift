/// Every setting of every Storekeeper executable, read and validated once at
/// start-up. Each executable validates all of them, so a bad value anywhere in
/// a shared environment stops the stack before it serves anything.
public struct StorekeeperConfiguration: Sendable {
    public var apple: AppleSettings
    /// The App Store Server API; nil when its credentials are not set.
    public var serverAPI: ServerAPISettings?
    public var gateway: GatewaySettings
    public var ledger: LedgerSettings
    public var endpoints: EndpointSettings
    public var simulator: SimulatorSettings
    public var log: LogSettings
    /// `STOREKEEPER_METRICS_ADDR`: /metrics of processes without their own HTTP server.
    public var metricsAddress: SocketAddress?
    /// `STOREKEEPER_*` variables set but read by nobody: likely typos, warned about at start-up.
    public var unknownVariables: [String]

    public init(reader: EnvironmentReader = EnvironmentReader()) throws(ConfigurationError) {
        apple = try AppleSettings(reader: reader)
        serverAPI = try ServerAPISettings(reader: reader, apple: apple)
        gateway = try GatewaySettings(reader: reader)
        ledger = try LedgerSettings(reader: reader)
        endpoints = try EndpointSettings(reader: reader)
        simulator = try SimulatorSettings(reader: reader)
        log = try LogSettings(reader: reader)
        metricsAddress = try reader.socketAddress(.metricsAddress)
        unknownVariables = reader.unknownVariables()
    }

    /// Every secret value, for the log redactor.
    public var secrets: [Secret] {
        (apple.sharedSecret.map { [$0] } ?? []) + gateway.apiKeys
    }
}

/// The local App Store simulator.
public struct SimulatorSettings: Sendable {
    /// The bundle the simulator sells when `STOREKEEPER_BUNDLE_IDS` names none.
    public static let defaultBundleID = "com.example.storekeeper"

    /// `STOREKEEPER_SIM_ADDR`: where storekeeper-sim listens.
    public var address: SocketAddress
    /// `STOREKEEPER_SIM_NOTIFICATION_URL`: where it posts server notifications.
    public var notificationURL: String?
    /// `STOREKEEPER_SIM_NOTIFICATION_VERSION`: 1 (JSON with password) or 2 (signedPayload).
    public var notificationVersion: Int
    /// `STOREKEEPER_SIM_PAGE_SIZE`: items per page of its Server API answers.
    public var pageSize: Int
    /// `STOREKEEPER_SIM_TLS_ADDR`: where it also listens over TLS (HTTP/2 or HTTP/1.1); nil for nowhere.
    public var tlsAddress: SocketAddress?

    public init(reader: EnvironmentReader) throws(ConfigurationError) {
        address = try reader.socketAddress(.simulatorAddress)!
        notificationURL = try reader.httpURL(.simulatorNotificationURL)
        notificationVersion = try reader.integer(.simulatorNotificationVersion, in: 1...2)
        pageSize = try reader.integer(.simulatorPageSize, in: 1...200)
        tlsAddress = try reader.socketAddress(.simulatorTLSAddress)
    }
}
