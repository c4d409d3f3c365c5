import AppleJWS
import Contracts
import Foundation
import LedgerClient
import Synchronization
import Testing
import ZeroMQ

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The stack with the App Store Server API, as real processes: the
/// simulator (its verifyReceipt, its Server API, version 2 notifications to
/// the gateway), a ledger serving /metrics, a gateway, and one verifier
/// trusting the simulator's signing chain, with its App Store Connect key
/// unless told otherwise (what `storekeeper up --sim` wires), plus an
/// in-process subscriber to the ledger's event stream and a ledger client.
/// `run` stops every process it started.
struct ServerAPIStack {
    let simulator: SimulatorProcess
    let ledger: LedgerProcess
    let gateway: GatewayProcess
    let verifier: ChildProcess
    let ledgerMetrics: String
    let events: EventWaiter
    let client: LedgerClient

    /// `serverAPI` false: the verifier has no App Store Server API credentials (and trusts the simulator's chain still).
    static func run(
        serverAPI: Bool = true, ledgerEnvironment: [String: String], _ body: (ServerAPIStack) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-sapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("AuthKey.p8").path
        let rootFile = directory.appendingPathComponent("sim-root.pem").path
        try SimulatorServerAPIKey.privateKeyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try SimulatorSigningChain.rootCertificatePEM.write(toFile: rootFile, atomically: true, encoding: .utf8)

        let gatewayPort = try GatewayProcess.reservePort()
        let metricsPort = try freeLoopbackPort()
        let simulator = try await SimulatorProcess(extraEnvironment: [
            "STOREKEEPER_SIM_NOTIFICATION_URL": "http://127.0.0.1:\(gatewayPort)/v1/notifications/apple",
            "STOREKEEPER_SIM_NOTIFICATION_VERSION": "2",
        ])
        let ledger: LedgerProcess
        do {
            ledger = try await LedgerProcess(
                extraEnvironment: ledgerEnvironment.merging(["STOREKEEPER_METRICS_ADDR": "127.0.0.1:\(metricsPort)"]) { $1 })
        } catch {
            await simulator.stop()
            throw error
        }
        let gateway: GatewayProcess
        do {
            gateway = try await GatewayProcess(port: gatewayPort, ledger: ledger)
        } catch {
            await ledger.stop()
            await simulator.stop()
            throw error
        }
        let context = ZMQContext()
        let events = EventWaiter()
        let client = ledger.client(context)
        let clientRunner = Task { try await client.run() }
        let subscriber = Task { try await ledger.subscriber(context).run(after: 0) { events.append($0) } }
        var verifierEnvironment = StackHarness.verifierEnvironment(gateway: gateway, ledger: ledger, simulator: simulator)
        verifierEnvironment["STOREKEEPER_JWS_EXTRA_ROOTS"] = rootFile
        if serverAPI {
            verifierEnvironment.merge([
                "STOREKEEPER_APPLE_API_PRODUCTION_URL": simulator.base + "/production",
                "STOREKEEPER_APPLE_API_SANDBOX_URL": simulator.base + "/sandbox",
                "STOREKEEPER_APPLE_ISSUER_ID": SimulatorServerAPIKey.issuerID,
                "STOREKEEPER_APPLE_KEY_ID": SimulatorServerAPIKey.keyID,
                "STOREKEEPER_APPLE_PRIVATE_KEY_FILE": keyFile,
                "STOREKEEPER_APPLE_APP_ID": String(SimulatorServerAPIKey.appAppleID),
            ]) { $1 }
        }
        var verifier: ChildProcess?
        do {
            verifier = try ChildProcess("storekeeper-verifier", environment: verifierEnvironment)
            try await gateway.waitUntilReady()
            try await body(
                ServerAPIStack(
                    simulator: simulator, ledger: ledger, gateway: gateway, verifier: verifier!,
                    ledgerMetrics: "http://127.0.0.1:\(metricsPort)/metrics", events: events, client: client))
        } catch {
            Issue.record("\(error)")
        }
        subscriber.cancel()
        _ = await subscriber.result
        clientRunner.cancel()
        _ = await clientRunner.result
        if let verifier { #expect(await verifier.stop() == 0) }
        #expect(await gateway.stop() == 0)
        #expect(await ledger.stop() == 0)
        await simulator.stop()
    }

    /// Buys a product at the simulator; its answer (ids, receipt, signed transaction).
    func buy(
        _ product: String, type: String, account: String, environment: String = "sandbox", appAccountToken: String? = nil
    ) async throws -> [String: Any] {
        var body: [String: Any] = ["account": account, "product_id": product, "type": type, "environment": environment]
        if let appAccountToken { body["app_account_token"] = appAccountToken }
        return try await simulator.admin("/admin/purchases", body)
    }

    /// Records a signed transaction for `user` through the gateway, as an app backend would.
    func record(_ purchase: [String: Any], for user: String) async throws -> HTTPAnswer {
        try await gateway.call(
            "POST", "/v1/transactions",
            json: ["user_id": user, "signed_transaction": purchase["signed_transaction"] as? String ?? ""])
    }

    /// The value of a counter the ledger serves on /metrics (0 when absent).
    func ledgerCounter(_ name: String) async throws -> Double {
        let (data, _) = try await URLSession.shared.data(from: URL(string: ledgerMetrics)!)
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }
}

/// What the event stream delivered, and a way to wait (bounded) for an event.
final class EventWaiter: Sendable {
    struct TimedOut: Error, CustomStringConvertible {
        let what: String
        var description: String { "no event \(what) within the bound" }
    }

    private struct Waiter {
        let id: UUID
        let matches: @Sendable (LedgerEvent) -> Bool
        let continuation: CheckedContinuation<LedgerEvent?, Never>
    }

    private struct State {
        var events: [LedgerEvent] = []
        var waiters: [Waiter] = []
        /// Waits whose bound ran out, possibly before they began waiting.
        var expired: Set<UUID> = []
    }

    private let state = Mutex(State())

    var all: [LedgerEvent] { state.withLock { $0.events } }

    func append(_ event: LedgerEvent) {
        let woken = state.withLock { state -> [CheckedContinuation<LedgerEvent?, Never>] in
            state.events.append(event)
            let matched = state.waiters.filter { $0.matches(event) }
            state.waiters.removeAll { $0.matches(event) }
            return matched.map(\.continuation)
        }
        for continuation in woken { continuation.resume(returning: event) }
    }

    /// The first event (delivered before or after this call) that `matches`; throws after `bound`.
    @discardableResult
    func first(
        _ what: String, within bound: Duration = .seconds(120), where matches: @escaping @Sendable (LedgerEvent) -> Bool
    ) async throws -> LedgerEvent {
        let id = UUID()
        let timeout = Task {
            try await Task.sleep(for: bound)
            self.cancel(id)
        }
        defer { timeout.cancel() }
        let event = await withCheckedContinuation { continuation in
            let now = state.withLock { state -> LedgerEvent?? in
                if let seen = state.events.first(where: matches) { return .some(seen) }
                if state.expired.contains(id) { return .some(nil) }
                state.waiters.append(Waiter(id: id, matches: matches, continuation: continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        guard let event else { throw TimedOut(what: what) }
        return event
    }

    private func cancel(_ id: UUID) {
        let continuation = state.withLock { state -> CheckedContinuation<LedgerEvent?, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                state.expired.insert(id)
                return nil
            }
            return state.waiters.remove(at: index).continuation
        }
        continuation?.resume(returning: nil)
    }
}
