import Contracts
import Foundation
import Logging
import VerifierPool
import ZeroMQ

/// An in-process gateway end of the verifier pool plus real verifier
/// processes pointed at the simulator: what the gateway will do, without it.
final class PoolHarness: Sendable {
    let client: VerifierPoolClient
    let endpoint: String
    let simulator: SimulatorProcess
    private let runner: Task<Void, any Error>

    /// Binds 127.0.0.1:`port` (a free port when nil).
    init(simulator: SimulatorProcess, port: Int? = nil) async throws {
        self.simulator = simulator
        let port = try port ?? freeLoopbackPort()
        endpoint = "tcp://127.0.0.1:\(port)"
        let client = VerifierPoolClient(context: ZMQContext(), endpoint: endpoint, logger: Logger(label: "test-pool"))
        self.client = client
        // Cancelled by `stop()`, which every test calls.
        runner = Task { try await client.run() }
    }

    /// Starts a verifier process connected to this pool.
    func startVerifier(_ environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(
            "storekeeper-verifier",
            environment: [
                "STOREKEEPER_VERIFIER_ENDPOINT": endpoint,
                "STOREKEEPER_APPLE_PRODUCTION_URL": simulator.productionURL,
                "STOREKEEPER_APPLE_SANDBOX_URL": simulator.sandboxURL,
                "STOREKEEPER_APPLE_SHARED_SECRET": SimulatorProcess.secret,
                "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
                "STOREKEEPER_LOG_LEVEL": "warning",
            ].merging(environment) { $1 })
    }

    /// Waits until `count` verifiers announced themselves (bounded).
    func waitForVerifiers(_ count: Int) async throws {
        for _ in 0..<600 {
            if client.workerCount >= count { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PoolNotReady()
    }

    struct PoolNotReady: Error {}

    func verify(_ receipt: String, deadline: Duration = .seconds(30), id: String = UUID().uuidString) async throws -> Envelope {
        var request = VerifyRequest()
        request.receiptData = receipt
        let deadlineMs = Int64(Date().timeIntervalSince1970 * 1_000) + deadline.components.seconds * 1_000
        return try await client.verify(Envelope(requestID: id, deadlineMilliseconds: deadlineMs, body: .verifyRequest(request)))
    }

    /// Verifies every receipt at once; the answers in completion order.
    func verifyAll(_ receipts: [String]) async throws -> [Envelope] {
        try await withThrowingTaskGroup(of: Envelope.self) { group in
            for receipt in receipts { group.addTask { try await self.verify(receipt) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    func stop() async {
        runner.cancel()
        _ = await runner.result
    }
}

extension Envelope {
    var failureCode: String? {
        if case .failure(let failure) = body { return failure.code }
        return nil
    }

    var result: VerifyResult? {
        if case .verifyResult(let result) = body { return result }
        return nil
    }
}
