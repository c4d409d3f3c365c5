import ServiceLifecycle

/// Runs `body` at once and then every `period` until graceful shutdown, which
/// cancels the sleep (the body in flight finishes first): the loop of the
/// ledger's periodic Services.
func runPeriodically(every period: Duration, _ body: @escaping @Sendable () async -> Void) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            await body()
            try? await Task.sleep(for: period)
        }
    }
}
