import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a `StackPlan` in the foreground: starts each member as a child
/// process, interleaves their output with a prefix per member, prints one
/// `ready` line once the gateway's /readyz answers 200, restarts a child that
/// dies (with back-off, logged), and on SIGINT/SIGTERM stops the children in
/// reverse order, leaving nothing running.
struct StackSupervisor: Service {
    let plan: StackPlan
    let binaryDirectory: URL
    let logger: Logger
    /// How long each child gets to stop: its own grace for in-flight work, and time to exit after it.
    var stopGrace: Duration = ProcessLauncher.gracefulShutdownGrace + .seconds(5)

    func run() async throws {
        let output = PrefixedOutput(names: plan.members.map(\.name))
        let children = plan.members.map {
            SupervisedChild(
                member: $0, binaryDirectory: binaryDirectory, output: output.sink(for: $0.name), logger: logger)
        }
        var started: [SupervisedChild] = []
        do {
            for child in children {
                try child.start()
                started.append(child)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for child in children {
                    group.addTask { try await child.supervise() }
                }
                group.addTask { [plan] in
                    for url in plan.gatewayURLs { try await Self.waitUntilReady(url) }
                    let urls = plan.gatewayURLs.map { $0 + "/" }.joined(separator: " ")
                    output.write(Array("storekeeper ready: \(urls)\n".utf8))
                    // Ends only with shutdown (or a child giving up, which throws from its own task).
                    try await Task.sleep(for: .seconds(365 * 86_400))
                }
                group.addTask {
                    try await gracefulShutdown()
                    throw CancellationError()
                }
                // The first task to end is shutdown or a child that gave up; either way the stack stops.
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch is CancellationError {
            await Self.stop(started, grace: stopGrace)
            return
        } catch {
            await Self.stop(started, grace: stopGrace)
            throw error
        }
    }

    /// In reverse start order, one kind at a time (the gateway stops taking
    /// requests before what it relies on goes), the members of a kind (the
    /// verifiers) together.
    private static func stop(_ children: [SupervisedChild], grace: Duration) async {
        var kinds: [[SupervisedChild]] = []
        for child in children {
            if kinds.last?.last?.member.executable == child.member.executable {
                kinds[kinds.count - 1].append(child)
            } else {
                kinds.append([child])
            }
        }
        for kind in kinds.reversed() {
            await withDiscardingTaskGroup { group in
                for child in kind { group.addTask { await child.stop(grace: grace) } }
            }
        }
    }

    /// Polls every 100 ms until /readyz answers 200; runs until cancelled.
    private static func waitUntilReady(_ gatewayURL: String) async throws {
        let url = URL(string: gatewayURL + "/readyz")!
        while true {
            try Task.checkCancellation()
            if let (_, response) = try? await URLSession.shared.data(from: url),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
