import Foundation
import Logging
import ProcessSpawn
import StorekeeperCore
import Synchronization

/// One member of the stack as a running process, restarted with back-off
/// whenever it dies until the stack stops. A child that exits with the
/// configuration-error status is not restarted: it would fail the same way.
final class SupervisedChild: Sendable {
    struct GaveUp: Error, CustomStringConvertible {
        let name: String
        let status: Int32
        var description: String { "\(name) exited with status \(status) (a configuration error); not restarted" }
    }

    let member: StackPlan.Member
    private let path: String
    private let environment: [String: String]
    private let output: @Sendable (Data) -> Void
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var process: SpawnedProcess?
        var startedAt = ContinuousClock.now
        var stopping = false
    }

    init(member: StackPlan.Member, binaryDirectory: URL, output: @escaping @Sendable (Data) -> Void, logger: Logger) {
        self.member = member
        self.path = binaryDirectory.appendingPathComponent(member.executable).path
        self.environment = ProcessInfo.processInfo.environment.merging(member.environment) { $1 }
        self.output = output
        self.logger = logger
    }

    /// Starts the process (the first time; restarts are `supervise()`'s).
    func start() throws {
        let process = try SpawnedProcess(path: path, environment: environment, ownProcessGroup: true, onOutput: output)
        state.withLock {
            $0.process = process
            $0.startedAt = .now
        }
        logger.info("started", metadata: ["member": "\(member.name)", "pid": "\(process.pid)"])
    }

    /// Watches the process until `stop()`; restarts it with back-off each time it dies.
    func supervise() async throws {
        var backoff = RestartBackoff()
        while true {
            // Sleeps until the child exits (or the stack stops): an idle stack's supervisor does not wake.
            guard let process = state.withLock({ $0.process }) else { return }
            let exitStatus = try await process.exited()
            let (stopping, uptime) = state.withLock { ($0.stopping, ContinuousClock.now - $0.startedAt) }
            // Stopped on purpose: `stop()` reports it; nothing to restart.
            if stopping { return }
            // Reaped elsewhere, its status unknown: restarted like any other death.
            let status = exitStatus ?? -1
            guard status != ProcessLauncher.configurationErrorStatus else {
                throw GaveUp(name: member.name, status: status)
            }
            let delay = backoff.delay(afterRunningFor: uptime)
            logger.warning(
                "exited; restarting",
                metadata: [
                    "member": "\(member.name)", "status": "\(status)",
                    "restart.delay_ms": "\(delay.nanoseconds / 1_000_000)",
                ])
            try await Task.sleep(for: delay)
            do {
                let process = try SpawnedProcess(path: path, environment: environment, ownProcessGroup: true, onOutput: output)
                state.withLock { state in
                    state.process = process
                    state.startedAt = .now
                }
                logger.info("restarted", metadata: ["member": "\(member.name)", "pid": "\(process.pid)"])
            } catch {
                // The dead process stays; counting from now keeps the back-off growing.
                state.withLock { $0.startedAt = .now }
                logger.error("could not restart", metadata: ["member": "\(member.name)", "error": "\(error)"])
            }
        }
    }

    /// SIGTERM, then SIGKILL after `grace`; no restart after this.
    func stop(grace: Duration) async {
        let process = state.withLock { state in
            state.stopping = true
            return state.process
        }
        guard let process else { return }
        let status = await process.stop(grace: grace)
        if let status {
            logger.info("stopped", metadata: ["member": "\(member.name)", "status": "\(status)"])
        } else {
            logger.warning("did not stop in time; killed", metadata: ["member": "\(member.name)"])
        }
    }
}
