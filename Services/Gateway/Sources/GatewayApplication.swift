import Logging
import ServiceLifecycle
import StorekeeperCore

/// Builds the services of `storekeeper-gateway`, the HTTP edge.
public enum GatewayApplication {
    public static let executableName = "storekeeper-gateway"

    /// The services to run, in start order (stopped in reverse).
    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        context.logger.info("configuration loaded", metadata: ["role": "the HTTP edge"])
        return []
    }
}
