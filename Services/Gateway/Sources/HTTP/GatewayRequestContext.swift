import Hummingbird
import Logging

/// Per-request state the middlewares fill in: the request id (also in the
/// logger's metadata) and which API key authenticated the caller.
struct GatewayRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var requestID = ""
    /// The index of the API key used, or nil when keys are off.
    var apiKeyIndex: Int?
    /// SHA-256 (hex) of the API key used, empty when keys are off: the scope of
    /// an Idempotency-Key (never the key itself).
    var apiKeyScope = ""

    /// The client's IP address (no port): the rate limit's caller when API keys are off.
    let remoteAddress: String?

    init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }
}
