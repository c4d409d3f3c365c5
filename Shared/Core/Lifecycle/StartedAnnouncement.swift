import Logging
import ServiceLifecycle

/// The first service of every process: logs `started` once the service group
/// runs (its SIGTERM/SIGINT handlers are installed by then, so a supervisor
/// that waits for this line can stop the process cleanly at once), then lasts
/// until shutdown, so a process is up even while its other services are idle.
struct StartedAnnouncement: Service {
    let logger: Logger
    let serviceCount: Int

    func run() async throws {
        logger.info("started", metadata: ["services": "\(serviceCount)"])
        try? await gracefulShutdown()
    }
}
