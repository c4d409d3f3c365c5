// One --peers server and its simulator, as the measurements use them.
import BenchmarkSupport
import Foundation
import NIOCore

/// One server and its simulator, started for one part of a round, with the generator's client to each.
struct PeerSession: Sendable {
    let contender: Contender
    let simulator: HTTPLoadClient
    let simPid: Int32
    let server: HTTPLoadClient

    /// POST /v1/receipts: "200", the API's error code, or the transport's error.
    func post(_ body: ByteBuffer) async -> String {
        outcome(of: await attempt { try await server.send(.POST, "/v1/receipts", json: body) })
    }

    /// How long the simulator's verifyReceipt takes, drawn from low...high ms, in both environments.
    func setLatency(_ low: Int, _ high: Int) async throws {
        for environment in ["production", "sandbox"] {
            _ = try await simulator.send(
                .POST, "/admin/faults/\(environment)", json: try Workload.json(["latency_min_ms": low, "latency_max_ms": high]))
        }
    }

    /// `phase`'s result, and the CPU ms per verification (`count` of them) of the server, the simulator and the generator over it.
    func costed(_ count: Int, _ phase: () async throws -> LoadSummary) async rethrows -> (LoadSummary, (Double, Double, Double)) {
        let pids = contender.processes()
        let before = (pids.map(cpuSeconds), cpuSeconds(simPid), cpuSeconds(getpid()))
        let summary = try await phase()
        let after = (pids.map(cpuSeconds), cpuSeconds(simPid), cpuSeconds(getpid()))
        let perVerification = { (seconds: Double) in 1_000 * seconds / Double(count) }
        return (summary, (
            perVerification(zip(after.0, before.0).map { $0 - $1 }.reduce(0, +)),
            perVerification(after.1 - before.1), perVerification(after.2 - before.2)))
    }
}
