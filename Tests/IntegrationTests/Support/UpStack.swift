import Foundation
import Testing

/// `storekeeper up --sim` as a real process tree on free loopback ports, and
/// the `storekeeper` CLI run against it as a person would run it.
final class UpStack: Sendable {
    let up: ChildProcess
    let environment: [String: String]
    let gateway: String
    let simulator: String
    let dataDirectory: String

    struct NotReady: Error, CustomStringConvertible {
        let output: String
        var description: String { "storekeeper up did not become ready:\n\(output)" }
    }

    /// The URL of each gateway (`--gateways N` listens on consecutive ports).
    let gateways: [String]

    init(verifiers: Int = 2, environment extra: [String: String] = [:], arguments: [String] = []) async throws {
        let gatewayCount = arguments.firstIndex(of: "--gateways").flatMap { Int(arguments[$0 + 1]) } ?? 1
        let httpPort = try freeLoopbackPort(consecutive: gatewayCount)
        let simPort = try freeLoopbackPort()
        dataDirectory = NSTemporaryDirectory() + "storekeeper-up-\(UUID().uuidString)"
        var environment = [
            "STOREKEEPER_HTTP_ADDR": "127.0.0.1:\(httpPort)", "STOREKEEPER_SIM_ADDR": "127.0.0.1:\(simPort)",
            "STOREKEEPER_DATA_DIR": dataDirectory, "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
        ]
        for variable in ["EVENTS", "VERIFIER", "LEDGER", "REPLAY", "REFRESH"] {
            environment["STOREKEEPER_\(variable)_ENDPOINT"] = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        }
        environment.merge(extra) { $1 }
        self.environment = environment
        gateway = "http://127.0.0.1:\(httpPort)"
        gateways = (0..<gatewayCount).map { "http://127.0.0.1:\(httpPort + $0)" }
        simulator = "http://127.0.0.1:\(simPort)"
        up = try ChildProcess("storekeeper", arguments: ["up", "--sim", "--verifiers", "\(verifiers)"] + arguments, environment: environment)
        guard await up.waitForOutput(containing: "storekeeper ready: \(gateway)/", timeout: .seconds(120)) else {
            await up.stop()
            throw NotReady(output: up.captured)
        }
    }

    /// Runs the stack's body, then stops the stack and checks that it ended
    /// cleanly with none of its children left running.
    static func run(
        verifiers: Int = 2, environment: [String: String] = [:], arguments: [String] = [],
        _ body: (UpStack) async throws -> Void
    ) async throws {
        let stack = try await UpStack(verifiers: verifiers, environment: environment, arguments: arguments)
        do {
            try await body(stack)
        } catch {
            Issue.record("\(error)")
        }
        let pids = stack.childPIDs()
        // The supervisor stops gateways, then verifiers, then ledgers, each kind with up to 35 s of grace.
        #expect(await stack.up.stop(timeout: .seconds(120)) == 0)
        // Each member's own stop was clean too (a crash on SIGTERM shows only here).
        let statuses = stack.captured(matching: #"stopped member=\S+ status=(\d+)"#)
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == "0" }, "stop statuses \(statuses)")
        #expect(pids.count >= verifiers + 3)
        for pid in pids { #expect(kill(pid, 0) != 0, "child \(pid) outlived storekeeper up") }
        try? FileManager.default.removeItem(atPath: stack.dataDirectory)
    }

    /// Every pid the supervisor reported starting (restarts included).
    func childPIDs() -> [pid_t] {
        captured(matching: #"(?:started|restarted) member=\S+ pid=(\d+)"#).compactMap { pid_t($0) }
    }

    /// How many children the supervisor restarted.
    var restarts: Int { captured(matching: #"restarted member=(\S+)"#).count }

    /// The pid `member` (e.g. `verifier-1`) runs as now.
    func pid(of member: String) -> pid_t? {
        captured(matching: #"(?:started|restarted) member=\#(member) pid=(\d+)"#).last.flatMap { pid_t($0) }
    }

    /// The first group of `pattern` in each line of the supervisor's output that matches it.
    func captured(matching pattern: String) -> [String] {
        guard let regex = try? Regex(pattern) else { return [] }
        return up.captured.split(separator: "\n").compactMap { line in
            (try? regex.firstMatch(in: String(line)))?.output[1].substring.map(String.init)
        }
    }

    /// Runs `storekeeper ARGS` against this stack to its end: its exit status and output.
    func cli(_ arguments: String...) async -> (status: Int32?, output: String) {
        guard let child = try? ChildProcess("storekeeper", arguments: arguments, environment: environment) else {
            return (nil, "could not start storekeeper")
        }
        let status = await child.waitForOwnExit(timeout: .seconds(120))
        return (status, child.captured)
    }

    /// Starts `storekeeper ARGS` and leaves it running (the caller stops it).
    func startCLI(_ arguments: String...) throws -> ChildProcess {
        try ChildProcess("storekeeper", arguments: arguments, environment: environment)
    }

    /// The JSON object of a CLI's `--json` output.
    static func json(_ output: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
    }
}
