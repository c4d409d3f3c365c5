import Logging
import ServiceLifecycle
import StorekeeperCore

/// Builds the services of `storekeeper-sim`, the local App Store simulator.
public enum SimulatorApplication {
    public static let executableName = "storekeeper-sim"

    /// The services to run, in start order (stopped in reverse).
    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        context.logger.info("configuration loaded", metadata: ["role": "the local App Store simulator"])
        return [IdleService()]
    }
}
