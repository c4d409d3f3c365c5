import Logging
import ServiceLifecycle
import StorekeeperCore

/// Builds the services of `storekeeper-verifier`, one member of the verifier pool.
public enum VerifierApplication {
    public static let executableName = "storekeeper-verifier"

    /// The services to run, in start order (stopped in reverse).
    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        context.logger.info("configuration loaded", metadata: ["role": "one member of the verifier pool"])
        return [IdleService()]
    }
}
