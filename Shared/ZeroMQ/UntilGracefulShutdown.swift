import ServiceLifecycle

/// Runs a service's tasks (its socket loop and the loops around it) until
/// graceful shutdown, then cancels them. If one of them fails first (a socket
/// that cannot bind its endpoint, say), that error ends the run at once: a
/// service must not live on without its socket, waiting for a shutdown that
/// nothing will ask for.
public func runUntilGracefulShutdown(
    _ addTasks: (inout ThrowingDiscardingTaskGroup<any Error>) -> Void
) async throws {
    do {
        try await withThrowingDiscardingTaskGroup { group in
            addTasks(&group)
            group.addTask {
                try? await gracefulShutdown()
                throw ShutdownReached()
            }
        }
    } catch is ShutdownReached {
        return
    }
}

/// Thrown by the shutdown watcher to cancel its siblings; never escapes.
private struct ShutdownReached: Error {}
