import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a `StackPlan` in the foreground: starts each member as a child
/// process (their output goes to this terminal), prints one `ready` line once
/// the gateway's /readyz answers 200, and on SIGINT/SIGTERM stops the
/// children in reverse order. A child that dies on its own takes the stack
/// down with it, with a non-zero exit: a half stack is worse than none.
struct StackSupervisor: Service {
    struct ChildExited: Error, CustomStringConvertible {
        let name: String
        let status: Int32
        var description: String { "\(name) exited with status \(status)" }
    }

    let plan: StackPlan
    let binaryDirectory: URL
    let logger: Logger

    func run() async throws {
        var children: [(StackPlan.Member, Process)] = []
        defer { Self.stop(children.reversed(), logger: logger) }
        for member in plan.members {
            children.append((member, try start(member)))
        }
        enum Ended { case ready, shutdown }
        try await withThrowingTaskGroup(of: Ended.self) { group in
            group.addTask { [plan] in
                try await Self.waitUntilReady(plan.gatewayAddress)
                // Written straight to the descriptor: a pipe reader sees it at once.
                FileHandle.standardOutput.write(Data("storekeeper ready: http://\(plan.gatewayAddress)/\n".utf8))
                return .ready
            }
            group.addTask { [children] in
                try await Self.watch(children)
                return .shutdown
            }
            group.addTask {
                try? await gracefulShutdown()
                return .shutdown
            }
            // Runs until shutdown is asked for or a child dies (which throws).
            while let ended = try await group.next(), ended == .ready {}
            group.cancelAll()
        }
    }

    private func start(_ member: StackPlan.Member) throws -> Process {
        let process = Process()
        process.executableURL = binaryDirectory.appendingPathComponent(member.executable)
        process.environment = ProcessInfo.processInfo.environment.merging(member.environment) { $1 }
        try process.run()
        logger.info("started", metadata: ["member": "\(member.name)", "pid": "\(process.processIdentifier)"])
        return process
    }

    /// Polls every 100 ms until /readyz answers 200; runs until cancelled.
    private static func waitUntilReady(_ address: SocketAddress) async throws {
        let url = URL(string: "http://\(address)/readyz")!
        while true {
            try Task.checkCancellation()
            if let (_, response) = try? await URLSession.shared.data(from: url),
                (response as? HTTPURLResponse)?.statusCode == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        // Never falls through: ready, or cancelled.
    }

    /// Throws as soon as one child exits; runs until cancelled otherwise.
    private static func watch(_ children: [(StackPlan.Member, Process)]) async throws {
        while true {
            for (member, process) in children where !process.isRunning {
                throw ChildExited(name: member.name, status: process.terminationStatus)
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// SIGTERM each child in turn (newest first), waiting up to 10 s for each, then SIGKILL.
    private static func stop(_ children: some Sequence<(StackPlan.Member, Process)>, logger: Logger) {
        for (member, process) in children where process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                logger.warning("did not stop in time; killing", metadata: ["member": "\(member.name)"])
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            logger.info("stopped", metadata: ["member": "\(member.name)", "status": "\(process.terminationStatus)"])
        }
    }
}
