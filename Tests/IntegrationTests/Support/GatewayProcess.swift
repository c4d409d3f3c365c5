import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `storekeeper-gateway` as a real process on a free loopback port, pointed at
/// a ledger, with its own verifier pool endpoint for verifier processes.
final class GatewayProcess: Sendable {
    let process: ChildProcess
    let base: String
    let verifierEndpoint: String

    /// The HTTP port is chosen first, so the simulator can be told where to send notifications.
    static func reservePort() throws -> Int { try freeLoopbackPort() }

    init(port: Int, ledger: LedgerProcess, extraEnvironment: [String: String] = [:]) async throws {
        base = "http://127.0.0.1:\(port)"
        verifierEndpoint = "tcp://127.0.0.1:\(try freeLoopbackPort())"
        process = try ChildProcess(
            "storekeeper-gateway",
            environment: [
                "STOREKEEPER_HTTP_ADDR": "127.0.0.1:\(port)", "STOREKEEPER_VERIFIER_ENDPOINT": verifierEndpoint,
                "STOREKEEPER_LEDGER_ENDPOINT": ledger.ledgerEndpoint,
                "STOREKEEPER_APPLE_SHARED_SECRET": SimulatorProcess.secret,
                "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper", "STOREKEEPER_LOG_LEVEL": "info",
            ].merging(extraEnvironment) { $1 })
    }

    /// Waits (bounded) until /healthz answers 200: the gateway serves HTTP.
    func waitUntilLive() async throws {
        for _ in 0..<300 {
            if (try? await call("GET", "/healthz").status) == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NotReady(output: process.captured)
    }

    /// Waits (bounded) until /readyz answers 200: the ledger and a verifier are reachable.
    func waitUntilReady() async throws {
        for _ in 0..<300 {
            if (try? await call("GET", "/readyz").status) == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NotReady(output: process.captured)
    }

    struct NotReady: Error { let output: String }

    @discardableResult
    func stop() async -> Int32? { await process.stop() }

    func call(
        _ method: String, _ path: String, json body: [String: Any]? = nil, requestID: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPAnswer {
        try await HTTPAnswer.call(method, base + path, json: body, requestID: requestID, headers: headers)
    }
}
