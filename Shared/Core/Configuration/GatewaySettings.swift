/// The HTTP edge.
public struct GatewaySettings: Sendable {
    /// `STOREKEEPER_HTTP_ADDR`: where the gateway listens.
    public var httpAddress: SocketAddress
    /// `STOREKEEPER_API_KEYS`: when not empty, `/v1/receipts`, `/v1/transactions` and
    /// `/v1/users/*` need `Bearer KEY`.
    public var apiKeys: [Secret]
    /// `STOREKEEPER_MAX_BODY_BYTES`: larger bodies are `413 payload_too_large`.
    public var maxBodyBytes: Int
    /// `STOREKEEPER_RATE_LIMIT_PER_MINUTE`: per API key (per client address when keys are off); 0 turns limiting off.
    public var rateLimitPerMinute: Int
    /// `STOREKEEPER_HTTP_READ_TIMEOUT_MS`: how long a connection may send nothing (slow-loris clients).
    public var readTimeout: Duration
    /// `STOREKEEPER_HTTP_THREADS`: the gateway's event loops (`threads(from:)`).
    public var httpThreads: Int

    public init(reader: EnvironmentReader) throws(ConfigurationError) {
        httpAddress = try reader.socketAddress(.httpAddress)!
        apiKeys = reader.secrets(.apiKeys)
        maxBodyBytes = try reader.integer(.maxBodyBytes, in: 1_024...64 * 1_048_576)
        rateLimitPerMinute = try reader.integer(.rateLimitPerMinute, in: 0...10_000_000)
        readTimeout = .milliseconds(try reader.integer(.httpReadTimeout, in: 100...600_000))
        httpThreads = try Self.threads(from: reader)
    }

    /// `STOREKEEPER_HTTP_THREADS`. Read on its own too: the event loops are made
    /// before the rest of the configuration is read (see `GatewayApplication`).
    public static func threads(from reader: EnvironmentReader) throws(ConfigurationError) -> Int {
        try reader.integer(.httpThreads, in: 1...256)
    }
}
