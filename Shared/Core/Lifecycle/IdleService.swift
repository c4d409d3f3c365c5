import Logging
import ServiceLifecycle

/// Keeps a process up until it is told to stop. A service whose real work
/// lives elsewhere (a socket loop started by another service) still needs
/// one member of its group that lasts for the life of the process.
public struct IdleService: Service {
    public init() {}

    public func run() async throws {
        // Waits for graceful shutdown (SIGTERM/SIGINT) or cancellation.
        try? await gracefulShutdown()
    }
}
