import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The whole stack as real processes: simulator (notifying the gateway),
/// ledger, gateway and verifiers, each serving /metrics on its own port.
/// `run` starts it, waits for /readyz, runs the body and stops every process.
struct StackHarness {
    let simulator: SimulatorProcess
    let ledger: LedgerProcess
    let gateway: GatewayProcess
    let verifiers: [ChildProcess]
    let verifierMetrics: [String]

    /// - Parameter handOff: verifiers name the gateway's ledger, so they hand
    ///   receipts to it (`LedgerHandoff`); false: they name another, and the
    ///   gateway records every receipt itself.
    static func run(
        verifierCount: Int = 2, bindingPolicy: String = "transfer", handOff: Bool = true,
        _ body: (StackHarness) async throws -> Void
    ) async throws {
        let gatewayPort = try GatewayProcess.reservePort()
        let simulator = try await SimulatorProcess(extraEnvironment: [
            "STOREKEEPER_SIM_NOTIFICATION_URL": "http://127.0.0.1:\(gatewayPort)/v1/notifications/apple"
        ])
        let ledger = try await LedgerProcess(policy: bindingPolicy, extraEnvironment: ["STOREKEEPER_REFRESH_PER_MINUTE": "0"])
        let gateway = try await GatewayProcess(port: gatewayPort, ledger: ledger)
        var verifiers: [ChildProcess] = []
        var metrics: [String] = []
        do {
            for _ in 0..<verifierCount {
                let metricsPort = try freeLoopbackPort()
                metrics.append("http://127.0.0.1:\(metricsPort)/metrics")
                verifiers.append(try ChildProcess(
                    "storekeeper-verifier",
                    environment: verifierEnvironment(gateway: gateway, ledger: ledger, simulator: simulator).merging([
                        "STOREKEEPER_METRICS_ADDR": "127.0.0.1:\(metricsPort)",
                        // Port 1 is never a ledger of a test: the verifier reaches no ledger.
                        "STOREKEEPER_LEDGER_ENDPOINT": handOff ? ledger.ledgerEndpoint : "tcp://127.0.0.1:1",
                    ]) { $1 }))
            }
            try await gateway.waitUntilReady()
            try await body(
                StackHarness(
                    simulator: simulator, ledger: ledger, gateway: gateway, verifiers: verifiers, verifierMetrics: metrics))
        } catch {
            Issue.record("\(error)")
        }
        for verifier in verifiers { #expect(await verifier.stop() == 0) }
        #expect(await gateway.stop() == 0)
        #expect(await ledger.stop() == 0)
        await simulator.stop()
    }

    /// Waits (bounded) until some verifier has begun a verification.
    func waitForAVerificationInFlight() async throws {
        for _ in 0..<600 {
            for url in verifierMetrics {
                let (data, _) = try await URLSession.shared.data(from: URL(string: url)!)
                let text = String(decoding: data, as: UTF8.self)
                if text.split(separator: "\n").contains(where: { $0.hasPrefix("storekeeper_verifier_in_flight ") && !$0.hasSuffix(" 0") && !$0.hasSuffix(" 0.0") }) {
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw NothingInFlight()
    }

    struct NothingInFlight: Error {}

    /// The sum over the verifiers of a counter they serve on /metrics, its
    /// sample lines picked by `labels` (e.g. `outcome="handed_over"`).
    func verifierCounter(_ name: String, labels: String) async throws -> Double {
        var total = 0.0
        for url in verifierMetrics {
            let (data, _) = try await URLSession.shared.data(from: URL(string: url)!)
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n")
            where line.hasPrefix(name + "{") && line.contains(labels) {
                total += line.split(separator: " ").last.flatMap { Double($0) } ?? 0
            }
        }
        return total
    }

    /// A verifier serving `gateway` and `ledger`'s refresh pool, calling `simulator`'s verifyReceipt.
    static func verifierEnvironment(
        gateway: GatewayProcess, ledger: LedgerProcess, simulator: SimulatorProcess
    ) -> [String: String] {
        [
            "STOREKEEPER_VERIFIER_ENDPOINT": gateway.verifierEndpoint,
            "STOREKEEPER_REFRESH_ENDPOINT": ledger.environment["STOREKEEPER_REFRESH_ENDPOINT"] ?? "",
            "STOREKEEPER_APPLE_PRODUCTION_URL": simulator.productionURL,
            "STOREKEEPER_APPLE_SANDBOX_URL": simulator.sandboxURL,
            "STOREKEEPER_APPLE_SHARED_SECRET": SimulatorProcess.secret,
            "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper", "STOREKEEPER_LOG_LEVEL": "info",
        ]
    }
}
