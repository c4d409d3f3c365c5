import Logging
import ServiceLifecycle
import StorekeeperCore

/// Builds the services of `storekeeper-ledger`, the owner of the database.
public enum LedgerApplication {
    public static let executableName = "storekeeper-ledger"

    /// The services to run, in start order (stopped in reverse).
    public static func makeServices(_ context: ProcessLauncher.Context) async throws -> [any Service] {
        context.logger.info("configuration loaded", metadata: ["role": "the owner of the database"])
        return []
    }
}
